"""Benchmark: near-duplicate detection and the copy checks over 100,000 synthetic questions from the real docs.

Questions are built from sentences of ``../shared/kb`` (English 0.120.0 + 0.141.1 and Chinese 0.141.1, chunked
with goldset's own chunker): a *base* question joins spans of two random KB sentences into a question template
(English or Chinese); 40% of bases get 1-4 *near-duplicates* made by realistic edits (case and punctuation, two
adjacent words or characters swapped, a synonym or a dropped function word, a prefix such as "In FastAPI," or
"请问"). Those groups are the known truth. Each pair's answer is either a copy of its sentence (30%) or a
reshuffled copy (its words in blocks of two, or characters in blocks of three, in another order: the order-free
overlap measure calls most of them copies), and its evidence is the sentence as written in its chunk.

Measured: wall time of duplicate detection at 10k / 30k / 100k questions (growth), precision and recall of the
pairs it groups against the known groups, several LSH settings, datasketch's MinHash for comparison, the verbatim
check (each pair against its own chunk), the question–source overlap check (against an LSH index of every KB
sentence), and peak memory (max RSS).

Run: ``.venv/bin/python benchmarks/bench_filters.py`` (writes the ``## filters`` section of RESULTS.md).

``--scale 10000,50000`` measures instead the whole ``goldset filter --no-llm`` process (issue #22) on a workspace of
that many of these candidates over the same chunks: wall time and the child process's peak memory (max RSS, from
``wait4``), each size in a fresh workspace and process. ``--verdicts FILE`` writes every pair's status and check
verdicts (passed, reason, score, duplicate_of) to FILE; ``--compare FILE`` exits 1 when they differ from FILE's:
what shows a speed change left the verdicts alone. ``--write`` puts the figures in the section ``## filters: the
whole process at scale`` (``--note`` at its top). ``--setup DIR`` only writes the workspaces, at ``DIR/<size>``, to
time them with other tools (``/usr/bin/time -v``, several runs, the code before and after in turn).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

from _results import machine, write_section

from goldset.filters import question_overlap, verbatim
from goldset.filters.neardup import LSHParams, SentenceIndex, duplicate_groups
from goldset.filters.textsim import edit_similarity, split_sentences
from goldset.kb.chunker import chunk_document
from goldset.schema import Evidence, QAPair
from goldset.text import has_cjk, tokenize

HERE = Path(__file__).resolve().parent
KB = HERE.parent.parent / "shared" / "kb"
RESULTS = HERE / "RESULTS.md"
SECTION = "## filters"
THRESHOLD = 0.85

EN_TEMPLATES = [
    "How does {a} relate to {b}?",
    "What happens to {a} when {b}?",
    "Why is {a} needed for {b}?",
    "In which case does {a} apply, given {b}?",
    "What is the role of {a} in {b}?",
    "When should I use {a} with {b}?",
]
ZH_TEMPLATES = ["{a}和{b}有什么关系？", "为什么{a}需要{b}？", "在{b}时，{a}会怎样？", "{a}在{b}中起什么作用？"]
EN_SYNONYMS = {
    "how": "in what way", "what": "which", "use": "apply", "needed": "required", "happens": "occurs",
    "role": "purpose", "should": "would", "does": "can", "when": "whenever", "relate": "connect",
}  # fmt: skip
ZH_SYNONYMS = {"什么": "啥", "为什么": "为何", "需要": "要", "作用": "用处", "关系": "联系", "怎样": "如何"}
EN_PREFIXES = ["In FastAPI, ", "Quick question: ", "Tell me: "]
ZH_PREFIXES = ["请问", "在 FastAPI 中，", "想知道："]
_CODE = re.compile(r"^\s*(\{\*|```|\||//|#|import |from |def |class |@|\$|>)")


def kb_chunks() -> list[Any]:
    chunks = []
    for sub in ("fastapi-en-0.120.0", "fastapi-en-0.141.1", "fastapi-zh-0.141.1"):
        root = KB / sub
        for path in sorted(root.rglob("*.md")):
            chunks += chunk_document(path.read_text(encoding="utf-8"), f"{sub}/{path.relative_to(root).as_posix()}")
    if not chunks:
        sys.exit(f"no documents under {KB}")
    return chunks


Sentence = tuple[int, str, str]


def prose_sentences(chunks: list[Any]) -> tuple[list[Sentence], list[Sentence]]:
    """(chunk index, sentence without Markdown, sentence as in the chunk) of prose sentences, English and Chinese
    apart. The bare sentence makes questions and answers; the one as written is the evidence quote (it must occur
    in the chunk, which the evidence check verifies)."""
    en, zh = [], []
    for ci, c in enumerate(chunks):
        for raw in split_sentences(c.text):
            if _CODE.match(raw):
                continue
            s = re.sub(r"[*`\[\]]|\(http[^)]*\)", "", raw).strip()
            n = len(tokenize(s))
            if has_cjk(s) and 8 <= n <= 60:
                zh.append((ci, s, raw))
            elif not has_cjk(s) and 6 <= n <= 40:
                en.append((ci, s, raw))
    return en, zh


def span(rng: random.Random, sentence: str, lo: int, hi: int, cjk: bool) -> str:
    units = list(re.sub(r"\s+", "", sentence).rstrip("。！？；：，") if cjk else sentence.rstrip(".!?:;,").split())
    k = min(len(units), rng.randint(lo, hi))
    start = rng.randint(0, len(units) - k)
    piece = units[start : start + k]
    return "".join(piece) if cjk else " ".join(piece)


def mutate(rng: random.Random, text: str, cjk: bool) -> str:
    """1-2 realistic edits that keep the question the same question."""
    for _ in range(rng.choice((1, 1, 2))):
        kind = rng.choice(("case", "swap", "synonym", "prefix"))
        if cjk:
            if kind == "case":
                text = text.replace("？", "?") if "？" in text else text + "？"
            elif kind == "swap":
                chars = list(text)
                i = rng.randrange(len(chars) - 2)
                chars[i], chars[i + 1] = chars[i + 1], chars[i]
                text = "".join(chars)
            elif kind == "synonym":
                options = [k for k in ZH_SYNONYMS if k in text]
                if options:
                    k = rng.choice(options)
                    text = text.replace(k, ZH_SYNONYMS[k], 1)
                else:
                    text = text.replace("的", "", 1)
            else:
                text = rng.choice(ZH_PREFIXES) + text
        else:
            words = text.split()
            if kind == "case":
                text = text.lower().rstrip("?") if rng.random() < 0.5 else text.rstrip("?") + " ?"
            elif kind == "swap" and len(words) > 3:
                i = rng.randrange(1, len(words) - 2)
                words[i], words[i + 1] = words[i + 1], words[i]
                text = " ".join(words)
            elif kind == "synonym":
                options = [i for i, w in enumerate(words) if w.lower() in EN_SYNONYMS]
                if options:
                    i = rng.choice(options)
                    words[i] = EN_SYNONYMS[words[i].lower()]
                else:
                    words = [w for w in words if w.lower() not in ("the", "a", "an")] or words
                text = " ".join(words)
            else:
                text = rng.choice(EN_PREFIXES) + text[0].lower() + text[1:]
    return text


def build(rng: random.Random, chunks: list[Any], n: int) -> tuple[list[str], list[int], list[Sentence]]:
    """Questions, their known group ids, and the source sentence (:data:`Sentence`) per question."""
    en, zh = prose_sentences(chunks)
    texts: list[str] = []
    groups: list[int] = []
    sources: list[Sentence] = []
    g = 0
    while len(texts) < n:
        cjk = rng.random() < 0.3
        pool, templates = (zh, ZH_TEMPLATES) if cjk else (en, EN_TEMPLATES)
        (ci, sa, raw_a), (_, sb, _) = rng.choice(pool), rng.choice(pool)
        lo_a, hi_a, lo_b, hi_b = (7, 14, 5, 10) if cjk else (5, 10, 4, 8)
        base = rng.choice(templates).format(a=span(rng, sa, lo_a, hi_a, cjk), b=span(rng, sb, lo_b, hi_b, cjk))
        size = 1 if rng.random() < 0.6 else rng.choice((2, 2, 2, 3, 3, 4, 5))
        for k in range(size):
            if len(texts) >= n:
                break
            texts.append(base if k == 0 else mutate(rng, base, cjk))
            groups.append(g)
            sources.append((ci, sa, raw_a))
        g += 1
    return texts, groups, sources


def answer_for(rng: random.Random, sentence: str) -> str:
    """30% a copy of the source sentence, else a reshuffled copy (blocks of words in another order)."""
    if rng.random() < 0.3:
        return sentence
    if has_cjk(sentence):
        chars = list(re.sub(r"\s+", "", sentence))
        blocks = [chars[i : i + 3] for i in range(0, len(chars), 3)]
        rng.shuffle(blocks)
        return "".join("".join(b) for b in blocks)
    words = sentence.split()
    blocks = [words[i : i + 2] for i in range(0, len(words), 2)]
    rng.shuffle(blocks)
    return "In short, " + " ".join(" ".join(b) for b in blocks)


def pair_sets(labels: list[int]) -> set[tuple[int, int]]:
    by: dict[int, list[int]] = {}
    for i, g in enumerate(labels):
        by.setdefault(g, []).append(i)
    return {(a, b) for members in by.values() for a, b in combinations(members, 2)}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_dedup(texts: list[str], params: LSHParams) -> tuple[float, list[list[int]], int]:
    t0 = time.perf_counter()
    found, pairs = duplicate_groups(texts, THRESHOLD, params)
    return time.perf_counter() - t0, found, len(pairs)


def quality(texts: list[str], truth: list[int], found: list[list[int]]) -> dict[str, float]:
    """Pairwise precision/recall of the grouping.

    The truth is the known groups, merged where two of them are linked by a pair that really is ≥ THRESHOLD
    similar (verified exactly: the generator made the same question twice by chance). Such links are only known
    when the index found them, so the merged truth never adds a pair the index missed. The strict figures use
    the known groups alone.
    """
    pred = {(a, b) for grp in found for a, b in combinations(grp, 2)}
    known = pair_sets(truth)
    tp_known = len(pred & known)
    close = {p for p in known if edit_similarity(texts[p[0]], texts[p[1]]) >= THRESHOLD}
    accidental = [(a, b) for a, b in pred - known if edit_similarity(texts[a], texts[b]) >= THRESHOLD]
    # Merge the known groups along the accidental links.
    parent = {g: g for g in set(truth)}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in accidental:
        ra, rb = find(truth[a]), find(truth[b])
        if ra != rb:
            parent[rb] = ra
    merged = [find(g) for g in truth]
    true = pair_sets(merged)
    tp = len(pred & true)
    return {
        "precision": tp / len(pred) if pred else 1.0,
        "recall": tp / len(true) if true else 1.0,
        "precision_known": tp_known / len(pred) if pred else 1.0,
        "recall_known": tp_known / len(known) if known else 1.0,
        "recall_close": len(pred & close) / len(close) if close else 1.0,
        "true_pairs": len(true),
        "known_pairs": len(known),
        "pred_pairs": len(pred),
        "accidental": len(accidental),
    }


def bench_datasketch(texts: list[str], params: LSHParams) -> float | None:
    """datasketch MinHash + MinHashLSH on the same shingles (None if it is not installed)."""
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        return None
    from goldset.filters.textsim import canonical

    t0 = time.perf_counter()
    lsh = MinHashLSH(num_perm=params.num_perm, params=(params.bands, params.rows))
    for i, t in enumerate(texts):
        c = canonical(t)
        m = MinHash(num_perm=params.num_perm)
        m.update_batch([c[j : j + params.shingle].encode("utf-8") for j in range(max(1, len(c) - params.shingle + 1))])
        lsh.query(m)
        lsh.insert(str(i), m)
    return time.perf_counter() - t0


def bench_pipeline(pairs: list[QAPair], chunks: list[Any]) -> tuple[float, float, int]:
    """``run_filters`` end to end on a workspace on disk (every check but the LLM judge): first run, re-run."""
    import tempfile

    from goldset.filters import run_filters
    from goldset.io import write_jsonl
    from goldset.workspace import Workspace

    root = Path(tempfile.mkdtemp(prefix="goldset-bench-filters-"))
    (root / "goldset.yaml").write_text("kb:\n  path: docs\n", encoding="utf-8")
    ws = Workspace(root)
    write_jsonl(ws.kb_dir / "chunks.jsonl", chunks)
    write_jsonl(ws.pairs_path, pairs)
    t0 = time.perf_counter()
    run_filters(ws, use_llm=False)
    t1 = time.perf_counter()
    again = run_filters(ws, use_llm=False)
    t2 = time.perf_counter()
    if again.computed:
        print(f"warning: the re-run recomputed {again.computed} verdicts", file=sys.stderr)
    return t1 - t0, t2 - t1, len(pairs)


SCALE_SECTION = "## filters: the whole process at scale (`goldset filter --no-llm`, issue #22)"


def scale_pairs(chunks: list[Any], n: int) -> list[QAPair]:
    """``n`` candidates of the 100k generator; the first ``k`` of them are the same whatever ``n`` (the answers
    draw from a generator of their own)."""
    texts, _, sources = build(random.Random(20261129), chunks, n)
    rng = random.Random(20261130)
    return [
        QAPair(
            id=f"qa-{i:06d}", question=q, answer=answer_for(rng, sent), question_type="factual",
            evidence=[Evidence(chunk_id=chunks[ci].id, doc_id=chunks[ci].doc_id, quote=raw)],
        )
        for i, (q, (ci, sent, raw)) in enumerate(zip(texts, sources, strict=True))
    ]  # fmt: skip


def verdict_digest(pairs_path: Path) -> dict[str, Any]:
    """Pair id -> its status and every check's verdict, read from the workspace's pairs.jsonl."""
    out: dict[str, Any] = {}
    with pairs_path.open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            checks = {
                name: [c["passed"], c.get("reason", ""), c.get("score"), c.get("duplicate_of")]
                for name, c in sorted((rec.get("checks") or {}).items())
            }
            out[rec["id"]] = [rec.get("status"), checks]
    return out


def scale_workspace(root: Path, chunks: list[Any], pairs: list[QAPair]) -> Path:
    """A workspace at ``root`` with the KB's chunks and ``pairs`` as its candidates; the candidates file's path."""
    from goldset.io import write_jsonl
    from goldset.workspace import Workspace

    root.mkdir(parents=True, exist_ok=True)
    (root / "goldset.yaml").write_text("kb:\n  path: docs\n", encoding="utf-8")
    ws = Workspace(root)
    write_jsonl(ws.kb_dir / "chunks.jsonl", chunks)
    write_jsonl(ws.pairs_path, pairs)
    return ws.pairs_path


def setup_scale(sizes: list[int], folder: Path) -> None:
    """``--setup``: the workspaces of :func:`run_scale` left at ``folder/<size>``, each with a copy of its candidates
    (``candidates.jsonl``): a filter run rewrites ``data/pairs.jsonl``, so copy it back before each timed run."""
    import shutil

    chunks = kb_chunks()
    all_pairs = scale_pairs(chunks, max(sizes))
    for n in sizes:
        pairs_path = scale_workspace(folder / str(n), chunks, all_pairs[:n])
        shutil.copyfile(pairs_path, folder / str(n) / "candidates.jsonl")
        print(f"{folder / str(n)}: cp candidates.jsonl data/pairs.jsonl && goldset filter --no-llm -w .")


def run_scale(sizes: list[int], verdicts: str | None, compare: str | None) -> list[str]:
    """One fresh workspace and ``goldset filter --no-llm`` process per size; table rows."""
    import tempfile

    chunks = kb_chunks()
    all_pairs = scale_pairs(chunks, max(sizes))
    rows, digests = [], {}
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"goldset-scale-{n}-") as tmp:
            root = Path(tmp)
            pairs_path = scale_workspace(root, chunks, all_pairs[:n])
            mib = pairs_path.stat().st_size / 2**20
            cmd = [sys.executable, "-m", "goldset", "filter", "--no-llm", "-w", str(root)]
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            err = proc.stderr.read().decode() if proc.stderr else ""
            if os.waitstatus_to_exitcode(status) not in (0, 1):
                sys.exit(f"goldset filter failed on {n} candidates: {err[-2000:]}")
            rss = usage.ru_maxrss / 1024
            digest = verdict_digest(pairs_path)
            digests[n] = digest
            passed = sum(1 for v in digest.values() if v[0] == "passed")
            load = " / ".join(Path("/proc/loadavg").read_text().split()[:3])
            row = f"| {n:,} | {mib:.1f} MiB | {wall:.1f} s | {rss:.0f} MiB | {passed:,} | {load} |"
            print(row, flush=True)
            rows.append(row)
    if verdicts:
        Path(verdicts).write_text(json.dumps({str(n): d for n, d in digests.items()}), encoding="utf-8")
    if compare:
        ref = json.loads(Path(compare).read_text(encoding="utf-8"))
        for n, d in digests.items():
            other = ref.get(str(n))
            if other is None:
                sys.exit(f"{compare} has no verdicts for {n} candidates")
            diff = [k for k in d.keys() | other.keys() if d.get(k) != other.get(k)]
            if diff:
                print(f"{n}: {len(diff)} pairs' verdicts differ, e.g. {sorted(diff)[:5]}", file=sys.stderr)
                for k in sorted(diff)[:3]:
                    print(f"  {k}: now {d.get(k)}\n  {' ' * len(k)}  was {other.get(k)}", file=sys.stderr)
                sys.exit(1)
            print(f"{n}: all {len(d):,} pairs' verdicts identical to {compare}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--scale", default="", help="comma-separated candidate counts: the whole-process benchmark")
    ap.add_argument("--verdicts", default=None, help="with --scale: write the verdicts to this file")
    ap.add_argument("--compare", default=None, help="with --scale: compare the verdicts with this file's")
    ap.add_argument("--write", action="store_true", help="with --scale: write its section of RESULTS.md")
    ap.add_argument("--note", default="", help="with --scale: a sentence at the top of its section")
    ap.add_argument("--setup", default=None, help="with --scale: only write the workspaces, to this folder")
    args = ap.parse_args()
    if args.scale and args.setup:
        setup_scale([int(x) for x in args.scale.split(",")], Path(args.setup))
        return
    if args.scale:
        rows = run_scale([int(x) for x in args.scale.split(",")], args.verdicts, args.compare)
        if args.write:
            write_section(scale_text(rows, args.note))
        return
    rng = random.Random(20261129)
    load_start = " / ".join(Path("/proc/loadavg").read_text().split()[:3])
    rss0 = peak_rss_mib()
    chunks = kb_chunks()
    texts, truth, sources = build(rng, chunks, args.n)
    n_groups = len(set(truth))
    dup_groups = sum(1 for g, c in _counts(truth).items() if c > 1)
    print(f"{len(chunks)} chunks; {len(texts)} questions in {n_groups} known groups ({dup_groups} with duplicates)")

    default = LSHParams()
    rows: list[str] = []
    times: dict[int, float] = {}
    rss_before = peak_rss_mib()
    for size in (10_000, 30_000, args.n):
        if size > args.n:
            continue
        t, found, _ = run_dedup(texts[:size], default)
        times[size] = t
        q = quality(texts[:size], truth[:size], found)
        rows.append(
            f"| {size:,} | {t:.2f} s | {q['precision']:.3f} | {q['recall']:.3f} | {q['precision_known']:.3f} | "
            f"{q['recall_known']:.3f} | {q['recall_close']:.3f} | {q['pred_pairs']:,} / {q['known_pairs']:,} | "
            f"{q['accidental']:,} |"
        )
        print(rows[-1], flush=True)
    dedup_rss = peak_rss_mib()

    settings_rows = []
    candidates = [LSHParams(64, 16), LSHParams(80, 16), LSHParams(100, 20), LSHParams(120, 20)]
    candidates.append(LSHParams(120, 20, shingle=4))
    for p in candidates:
        t, found, _ = run_dedup(texts, p)
        q = quality(texts, truth, found)
        settings_rows.append(
            f"| {p.num_perm} / {p.bands} × {p.rows} / {p.shingle} | {t:.2f} s | {q['precision']:.3f} | "
            f"{q['recall']:.3f} | {q['recall_close']:.3f} |"
        )
        print(settings_rows[-1], flush=True)

    ds_n = 5_000
    ds = bench_datasketch(texts[:ds_n], default)
    ours_small, _, _ = run_dedup(texts[:ds_n], default)
    print(f"datasketch {ds_n}: {ds}; ours {ours_small:.2f}", flush=True)

    # The copy checks: each pair against its own evidence chunk.
    pairs = [
        QAPair(
            id=f"qa-{i:06d}", question=q, answer=answer_for(rng, sent), question_type="factual",
            evidence=[Evidence(chunk_id=chunks[ci].id, doc_id=chunks[ci].doc_id, quote=raw)],
        )
        for i, (q, (ci, sent, raw)) in enumerate(zip(texts, sources, strict=True))
    ]  # fmt: skip
    by_id = {c.id: c for c in chunks}
    vs = verbatim.Settings()
    t0 = time.perf_counter()
    verdicts = [verbatim.check(p, by_id, vs) for p in pairs]
    t_verbatim = time.perf_counter() - t0
    copies = sum(1 for v in verdicts if not v.passed)
    print(f"verbatim: {t_verbatim:.2f} s, {copies} copies flagged", flush=True)

    qs = question_overlap.Settings()
    t0 = time.perf_counter()
    index = SentenceIndex([s for c in chunks for s in split_sentences(c.text)])
    t_index = time.perf_counter() - t0
    hits = index.query_many([p.question for p in pairs], threshold=0.5)
    t_query = time.perf_counter() - t0 - t_index
    overlap = [
        question_overlap.check(p, by_id, qs, [index.sentences[i] for i, _ in h])
        for p, h in zip(pairs, hits, strict=True)
    ]
    t_overlap = time.perf_counter() - t0
    flagged = sum(1 for v in overlap if not v.passed)
    print(f"overlap: index {t_index:.2f} s ({len(index)} sentences), query {t_query:.2f} s, total {t_overlap:.2f} s")
    total_rss = peak_rss_mib()
    t_pipe_first, t_pipe_again, n_pipe = bench_pipeline(pairs[:10_000], chunks)
    print(f"pipeline: {n_pipe} pairs, first run {t_pipe_first:.2f} s, unchanged re-run {t_pipe_again:.2f} s")
    load = " / ".join(Path("/proc/loadavg").read_text().split()[:3]) + " (1/5/15 min; the 2 CPUs are shared)"

    growth = ""
    if 10_000 in times and args.n in times:
        ratio = times[args.n] / times[10_000]
        growth = (
            f"Growth 10k → {args.n // 1000}k: ×{ratio:.1f} time for ×{args.n / 10_000:.0f} questions "
            f"(quadratic would be ×{(args.n / 10_000) ** 2:.0f})."
        )
    ds_line = (
        f"datasketch (MinHash.update_batch + MinHashLSH, same shingles and bands) on the first {ds_n:,} questions: "
        f"{ds:.2f} s vs ours {ours_small:.2f} s (×{ds / ours_small:.0f}); linear extrapolation to 100k: "
        f"~{ds * 100_000 / ds_n:.0f} s."
        if ds is not None
        else "datasketch not installed: no comparison."
    )
    text = f"""{SECTION}
Machine: {machine()}. Script: `benchmarks/bench_filters.py`.

{len(texts):,} synthetic questions from {len(chunks)} chunks of `shared/kb` (en 0.120.0 + 0.141.1, zh 0.141.1): two
spans of random KB sentences in a question template (30% Chinese); 40% of bases got 1-4 near-duplicates by realistic
edits (case/punctuation, swapped neighbours, a synonym or dropped article, a prefix like "In FastAPI,"/"请问") =
{dup_groups:,} known duplicate groups. Duplicate = normalised Indel similarity ≥ {THRESHOLD} of canonical text; LSH
picks candidates, every candidate is verified exactly. Precision/recall over question pairs vs the known groups;
"recall ≥ thr" counts only known pairs whose similarity really is ≥ {THRESHOLD} (the index's own recall).
"accidental links" = grouped pairs outside the known groups that are nonetheless ≥ {THRESHOLD} similar (the generator
made the same question twice by chance); precision and recall use the known groups merged along those links, the
"known only" columns the known groups alone (an accidental link between groups of 3 and 4 costs 12 "wrong" pairs there).

Duplicate detection, default settings (120 permutations, 20 bands × 6 rows, character 3-grams):

| questions | wall | precision | recall | precision (known only) | recall (known only) | recall ≥ thr | \
grouped / known pairs | accidental links |
|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

{growth}

LSH settings at {len(texts):,} questions (permutations / bands × rows / shingle):

| setting | wall | precision | recall | recall ≥ thr |
|---|---|---|---|---|
{chr(10).join(settings_rows)}

{ds_line}

Copy checks over all {len(pairs):,} pairs (30% of answers copy their sentence, the others reshuffle its words):

| check | wall | flagged |
|---|---|---|
| verbatim (sentence-window similarity, order-free sentence overlap, 3-gram containment, longest run; \
question words and identifiers discounted; stops at the first measure over its threshold) | \
{t_verbatim:.2f} s | {copies:,} |
| question–source overlap: index of {len(index):,} KB sentences (build {t_index:.2f} s), batched LSH query \
({t_query:.2f} s), then the check | {t_overlap:.2f} s | {flagged:,} |

Duplicates + verbatim at {len(texts):,}: {times.get(args.n, 0) + t_verbatim:.2f} s; with the question–source overlap
as well: {times.get(args.n, 0) + t_verbatim + t_overlap:.2f} s (target for the three together: < 10 s). Load average
at the start: {load_start}; at the end: {load}.
`run_filters` end to end on a workspace with the first {n_pipe:,} of these pairs (read, all checks but the LLM judge,
duplicates, write back): first run {t_pipe_first:.2f} s, unchanged re-run {t_pipe_again:.2f} s (every verdict reused).
Peak memory (max RSS of the process): {rss0:.0f} MiB at start, {rss_before:.0f} MiB with the data built,
{dedup_rss:.0f} MiB after duplicate detection at {len(texts):,}, {total_rss:.0f} MiB at the end.
"""
    print(text)
    if not args.no_write:
        write_section(text)


def scale_text(rows: list[str], note: str) -> str:
    return f"""{SCALE_SECTION}
Machine: {machine()}. Script: `benchmarks/bench_filters.py --scale 10000,50000` (`--write` updates this section).

{note.strip()}
The candidates are those of the section "filters" (the same generator and seed: questions from two KB sentences,
40% of bases with near-duplicates, answers copying or reshuffling their sentence, evidence quoting its chunk) over
the same 923 chunks; each size in a fresh workspace, filtered by one `goldset filter --no-llm -w ROOT` process
(every check but the LLM judges, duplicates, the write-back). Wall time of the process; memory is its peak
resident set (max RSS from `wait4`), the whole process.

| candidates | pairs.jsonl | wall | peak memory | passed | load average (1/5/15 min) at the end |
|---|---|---|---|---|---|
{chr(10).join(rows)}
"""


def _counts(labels: list[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for g in labels:
        out[g] = out.get(g, 0) + 1
    return out


if __name__ == "__main__":
    main()
