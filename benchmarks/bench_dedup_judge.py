"""Benchmark: duplicate detection on the hand-labelled sets, and which figure needs which measure.

The sets are those of ``benchmarks/bench_filter_accuracy.py`` (``tests/fixtures/labelled``, tuned on, and
``tests/fixtures/heldout``, the honest one): per set, the good, duplicate and close-but-different pairs of both
languages, ingested and placed in chunks exactly as there. Figures, per set and language:

1. **Lexical only** (``goldset.run_filters(ws, use_llm=False)``): duplicate precision and recall as the accuracy
   benchmark counts them (a flag is right when the pair it names is in its own duplicate group).
2. **Candidate recall of the duplicate judge's pre-filter** (no server:
   :func:`goldset.filters.duplicate_judge.candidates` on the set's pairs, as the stage calls it): the share of
   true duplicate pairs (every two members of a duplicate group) that reach the judge, identical questions
   counted as found. That is the recall a *perfect* judge would have at most. With it, the judge calls per 1,000
   pairs (``batch`` pairs per call), for a sweep of ``top_k`` / ``min_similarity``; with ``--embeddings`` also
   the embedding candidates (``OPENAI_BASE_URL`` + ``GOLDSET_EMBEDDING_MODEL``, e.g.
   ``benchmarks/embedding_server.py`` with all-MiniLM-L6-v2).
3. **Plumbing check, not quality**: the whole filter stage with the judge on, against the fake OpenAI server of the
   tests answering from the labels themselves (an oracle: "same group"). Its precision and recall show that the
   candidates, batching, verdicts and grouping carry a perfect judge's answers through; they say nothing about a
   real model's judgement, which needs a real LLM (none is reachable on the machine these figures come from). The
   re-run is checked to make 0 calls.

Run: ``.venv/bin/python benchmarks/bench_dedup_judge.py [--embeddings] [--write]`` (``--write`` replaces the
``## filters: duplicate judge`` section of RESULTS.md).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from _results import machine, write_section
from bench_filter_accuracy import SET_LABELS, SET_TITLES, SETS, TAG, dup_figures, goldset_commit, load_labels, to_pair

from goldset.io import read_jsonl, write_jsonl
from goldset.schema import Chunk, QAPair

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests.helpers (the fake server and the oracle responder)

SECTION = "## filters: duplicate judge on the hand-labelled sets"
LANGS = ("en", "zh")
SWEEP = [(k, m) for k in (2, 3, 5) for m in (0.0, 0.05, 0.1)]
DEFAULT = (3, 0.05)


def set_pairs(set_name: str, root: Path) -> tuple[list[dict[str, Any]], Any]:
    """The set's labels (good, duplicate, close_different) and a workspace holding them as candidates."""
    from goldset import ingest
    from goldset.scaffold import init_workspace
    from goldset.workspace import Workspace

    labels = [r for r in load_labels(set_name) if r["label"] in SET_LABELS]
    init_workspace(root, dvc=False)
    ws = Workspace(root)
    ingest(SETS[set_name] / "docs", ws)
    chunks = read_jsonl(ws.kb_dir / "chunks.jsonl", Chunk)
    write_jsonl(ws.pairs_path, [to_pair(r, chunks) for r in labels])
    return labels, ws


def by_label(ws: Any) -> dict[str, QAPair]:
    out = {}
    for p in read_jsonl(ws.pairs_path, QAPair):
        out[next(t[len(TAG) :] for t in p.tags if t.startswith(TAG))] = p
    return out


def true_pairs(labels: list[dict[str, Any]]) -> set[frozenset[str]]:
    """Every two members of a duplicate group (label ids)."""
    dup_groups = {r["group"] for r in labels if r["label"] == "duplicate"}
    members: dict[str, list[str]] = defaultdict(list)
    for r in labels:
        if r["group"] in dup_groups:
            members[r["group"]].append(r["id"])
    return {frozenset(p) for ids in members.values() for p in itertools.combinations(ids, 2)}


def embed(questions: list[str]) -> list[list[float] | None]:
    import asyncio

    from goldset.llm import LLMClient, resolve_endpoint

    async def go() -> list[list[float] | None]:
        async with LLMClient(resolve_endpoint(None, "judge")) as client:
            return await client.embed(questions)

    return asyncio.run(go())


def candidate_figures(
    labels: list[dict[str, Any]], pairs: dict[str, QAPair], settings: Any, vectors: list | None, answers: bool = True
) -> dict[str, Any]:
    """Candidate recall per language and calls per 1,000 pairs for one setting of the pre-filter."""
    from goldset.filters import duplicate_judge, duplicates

    ids = sorted(pairs)
    everyone = [pairs[i] if answers else pairs[i].model_copy(update={"answer": ""}) for i in ids]
    strict = duplicates.links(everyone, duplicates.Settings())
    found = duplicate_judge.candidates(
        everyone, settings, strict=strict.strict_pairs(), vectors=vectors,
        skip=lambda i, j: (i, j) in strict.identical,
    )  # fmt: skip
    reached = {frozenset((ids[c.i], ids[c.j])) for c in found} | {
        frozenset((ids[i], ids[j])) for i, j in strict.identical
    }
    lang = {r["id"]: r["language"] for r in labels}
    out: dict[str, Any] = {}
    for la in LANGS:
        want = {p for p in true_pairs(labels) if lang[next(iter(p))] == la}
        got = want & reached
        out[la] = (len(got), len(want), sorted("~".join(sorted(p)) for p in want - got))
    batches = duplicate_judge.batches(everyone, found, settings.batch)
    out["n"] = len(everyone)
    out["candidates"] = len(found)
    out["calls"] = len(batches)
    out["per_1000"] = 1000 * len(batches) / len(everyone)
    out["cross"] = sum(1 for c in found if everyone[c.i].language != everyone[c.j].language)
    return out


def lexical_run(set_name: str) -> dict[str, dict[str, Any]]:
    from goldset import run_filters

    with tempfile.TemporaryDirectory(prefix=f"goldset-dedup-{set_name}-") as tmp:
        labels, ws = set_pairs(set_name, Path(tmp))
        run_filters(ws, use_llm=False)
        verdicts = by_label(ws)
    return {la: dup_figures([r for r in labels if r["language"] == la], verdicts) for la in LANGS}


def plumbing_run(set_name: str) -> dict[str, Any]:
    """The stage end to end with an oracle on the fake server: figures per language, calls, re-run calls."""
    from goldset import run_filters
    from tests.helpers.duplicate_responders import group_oracle, make_duplicate_responder
    from tests.helpers.fake_openai import FakeOpenAI

    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GOLDSET_JUDGE_MODEL",
                                             "GOLDSET_MODEL", "GOLDSET_EMBEDDING_MODEL")}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix=f"goldset-dedup-judge-{set_name}-") as tmp, FakeOpenAI() as fake:
        labels, ws = set_pairs(set_name, Path(tmp))
        dup_groups = {r["group"] for r in labels if r["label"] == "duplicate"}
        group_of = {r["question"]: r["group"] for r in labels if r["group"] in dup_groups}
        fake.add_responder("duplicate_judge", make_duplicate_responder(group_oracle(group_of)))
        os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=fake.api_key, GOLDSET_JUDGE_MODEL="oracle")
        os.environ.pop("GOLDSET_EMBEDDING_MODEL", None)
        try:
            no_groundedness(ws.config_path)
            report = run_filters(ws)
            first_calls = fake.calls
            verdicts = by_label(ws)
            run_filters(ws)
            rerun_calls = fake.calls - first_calls
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    out: dict[str, Any] = {la: dup_figures([r for r in labels if r["language"] == la], verdicts) for la in LANGS}
    out["calls"] = first_calls
    out["rerun_calls"] = rerun_calls
    out["stats"] = report.duplicate_judge
    out["errors"] = report.judge_errors
    out["n"] = len(labels)
    return out


def scaling(sizes: tuple[int, ...] = (1_000, 10_000, 30_000, 60_000)) -> tuple[list[str], dict[int, float]]:
    """Wall time of the lexical pre-filter and its calls per 1,000 pairs on synthetic sets (Zipf-distributed words:
    10-word questions, 15-word answers over a 5,000-word vocabulary), to show the cost grows linearly."""
    import random
    import time

    from goldset.filters import duplicate_judge
    from goldset.filters.duplicate_judge import DuplicateJudgeSettings
    from goldset.schema import Evidence

    rng = random.Random(1)
    words = [f"w{i}" for i in range(5000)]
    weights = [1 / (r + 1) for r in range(len(words))]
    per_pair: dict[int, float] = {}  # ms per pair
    rows = ["| pairs | pre-filter wall | candidate pairs | judge calls | calls per 1,000 pairs |",
            "|---|---|---|---|---|"]
    for n in sizes:
        ps = [
            QAPair(id=f"qa-{i:06}", question=" ".join(rng.choices(words, weights=weights, k=10)) + "?",
                   answer=" ".join(rng.choices(words, weights=weights, k=15)), question_type="factual", language="en",
                   evidence=[Evidence(chunk_id="c", doc_id="d", quote="x")])
            for i in range(n)
        ]  # fmt: skip
        t = time.perf_counter()
        found = duplicate_judge.candidates(ps, DuplicateJudgeSettings())
        calls = len(duplicate_judge.batches(ps, found, DuplicateJudgeSettings().batch))
        wall = time.perf_counter() - t
        rows.append(f"| {n:,} | {wall:.2f} s | {len(found):,} | {calls:,} | {1000 * calls / n:.0f} |")
        per_pair[n] = 1000 * wall / n
        print(rows[-1], flush=True)
    return rows, per_pair


def no_groundedness(config: Path) -> None:
    """goldset.yaml without the groundedness judge (the fake server here only plays the duplicate judge)."""
    import yaml

    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    section = data.get("filter") or {}
    section["checks"] = {**(section.get("checks") or {}), "groundedness": {"enabled": False}}
    data["filter"] = section
    config.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def summary(
    lex: dict[str, Any], data: dict[str, Any], plumb: dict[str, Any], model: str | None, per_pair: dict[int, float]
) -> list[str]:
    """Which figure needs which measure, from the figures above (held-out = the honest set)."""
    from goldset.filters.duplicate_judge import MAX_POSTINGS, DuplicateJudgeSettings

    st = DuplicateJudgeSettings()
    lo, hi = sorted(per_pair)[1], max(per_pair)
    rec = []
    per = []
    for s in SETS:
        labels, pairs, _ = data[s]
        f = candidate_figures(labels, pairs, st, None)
        rec += [f[la][0] / f[la][1] for la in LANGS]
        per.append(f["per_1000"])
    h = lex["heldout"]
    emb = ""
    if model:
        both = [candidate_figures(*data[s][:2], st, data[s][2]) for s in SETS]
        emb = (f" With {model} embedding neighbours as well, candidate recall stays "
               f"{min(b[la][0] / b[la][1] for b in both for la in LANGS):.2f} and the calls grow to "
               f"{min(b['per_1000'] for b in both):.0f}–{max(b['per_1000'] for b in both):.0f} per 1,000 pairs: on "
               "these sets they add cost, not recall. Only with `cross_language: true` do they propose a "
               "question's translation (lexical candidates never do), for a set where a translation counts as a "
               "duplicate.")  # fmt: skip
    fill = [candidate_figures(*data[s][:2], st, None) for s in SETS]
    per_call = sum(f["candidates"] for f in fill) / sum(f["calls"] for f in fill)
    share = f"{min(rec):.2f}" if min(rec) == max(rec) else f"{min(rec):.2f}–{max(rec):.2f}"
    return [
        "**Which figure needs which** (target: duplicate precision and recall ≥ 0.95):", "",
        f"- *Lexical only* (no endpoint): held-out precision en {pr(h['en']).split(', R')[0][2:]}, zh "
        f"{pr(h['zh']).split(', R')[0][2:]}; recall en {h['en']['recall']:.2f}, zh {h['zh']['recall']:.2f}. It finds "
        "near-copies only; no lexical threshold separates rewordings from close-but-different questions "
        "(their similarity ranges overlap: section above). Misses both targets.",
        "- *Embeddings as a threshold* (an embeddings endpoint; `semantic: true`): measured in the section above "
        "with all-MiniLM-L6-v2, the only local model: at its best English F1 precision 0.50–0.60, recall 0.56–0.67, "
        "and meaningless on Chinese (an English-only vocabulary). Misses both targets; a multilingual model was not "
        "available to measure.",
        f"- *The duplicate judge* (a judge endpoint): its default pre-filter hands the judge {share} of the true "
        f"duplicate pairs on both sets and languages, at {min(per):.0f}–{max(per):.0f} calls per 1,000 pairs on "
        f"these sets ({per_call:.1f} pairs per call of at most {st.batch}). The candidates, and so the calls, grow "
        f"linearly: at most top_k + embedding_top_k per question, plus the pairs over a threshold (near-copies, few). "
        f"The pre-filter's own time per pair still grows over part 4's range ({per_pair[lo]:.2f} ms at {lo:,} pairs, "
        f"{per_pair[hi]:.2f} ms at {hi:,}); it is bounded, as a word held by more than {MAX_POSTINGS} questions is "
        f"not looked up.{emb} "
        "So the recall ceiling is met, and both targets are reachable "
        "exactly when the judge itself is right on ≥ 95% of the pairs it is shown. **The judge's own precision and "
        "recall are not measured**: they need a real LLM, and none is reachable from this machine. The plumbing "
        "check (part 3) only shows that a judge that is right yields precision and recall 1.00 through the stage, "
        "with no chained groups, and that a re-run makes 0 calls.",
    ]  # fmt: skip


def pr(d: dict[str, Any]) -> str:
    flags = d["tp"] + d["fp"]
    p = f"{d['precision']:.2f} ({d['tp']}/{flags})" if flags else "— (0 flags)"
    return f"P {p}, R {d['recall']:.2f} ({d['tp']}/{d['expected']})"


def main() -> None:
    from goldset.filters.duplicate_judge import DuplicateJudgeSettings

    ap = argparse.ArgumentParser()
    ap.add_argument("--embeddings", action="store_true", help="also embedding candidates (OPENAI_BASE_URL + "
                    "GOLDSET_EMBEDDING_MODEL)")  # fmt: skip
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of RESULTS.md")
    args = ap.parse_args()
    model = os.environ.get("GOLDSET_EMBEDDING_MODEL")
    if args.embeddings and not (model and os.environ.get("OPENAI_BASE_URL")):
        sys.exit("--embeddings needs OPENAI_BASE_URL and GOLDSET_EMBEDDING_MODEL (see benchmarks/embedding_server.py)")

    cols = [(s, la) for s in SETS for la in LANGS]
    head = "| " + " | ".join(f"{SET_TITLES[s]} {la}" for s, la in cols) + " |"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    how = (f" --embeddings` (embeddings of `{model}` from `{os.environ['OPENAI_BASE_URL']}`, e.g. "
           "benchmarks/embedding_server.py in its own virtualenv)") if args.embeddings else "`"  # fmt: skip
    lines = [SECTION, f"Machine: {machine()}; load average {load} at the start. Script: "
             f"`benchmarks/bench_dedup_judge.py{how}.", "",
             f"Code measured: goldset as of commit {goldset_commit()}. Sets: good + duplicate + close-different pairs "
             "of `tests/fixtures/labelled` (tuned on) and `tests/fixtures/heldout` (held out), both languages in one "
             "workspace per set, as in `bench_filter_accuracy.py`; precision and recall counted the same way there.",
             ""]  # fmt: skip
    data: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="goldset-dedup-cands-") as tmp:
        for s in SETS:
            labels, ws = set_pairs(s, Path(tmp) / s)
            pairs = by_label(ws)
            vectors = embed([pairs[i].question for i in sorted(pairs)]) if args.embeddings else None
            data[s] = (labels, pairs, vectors)
            print(f"{s}: {len(pairs)} pairs, {len(true_pairs(labels))} true duplicate pairs", flush=True)

    lex = {s: lexical_run(s) for s in SETS}
    lines += ["**1. Lexical only** (`use_llm=False`: normalised Indel ≥ 0.85, identifier guard; the default):", "",
              "| figure | " + head[2:], "|---" * (len(cols) + 1) + "|",
              "| duplicates | " + " | ".join(pr(lex[s][la]) for s, la in cols) + " |", ""]  # fmt: skip

    def cand_row(title: str, st: Any, use_vectors: bool, answers: bool = True) -> str:
        cells = []
        for s, la in cols:
            labels, pairs, vectors = data[s]
            f = candidate_figures(labels, pairs, st, vectors if use_vectors else None, answers)
            got, want, _ = f[la]
            cells.append(f"{got}/{want} ({got / want:.2f}); {f['per_1000']:.0f}")
        return f"| {title} | " + " | ".join(cells) + " |"

    lines += ["**2. What reaches the judge** (candidate recall: true duplicate pairs proposed to the judge, identical "
              "questions counted as found = the recall ceiling of a perfect judge; then judge calls per 1,000 pairs "
              "of the set, batch 8; calls are counted over both languages of the set):", "",
              "| pre-filter | " + head[2:], "|---" * (len(cols) + 1) + "|"]  # fmt: skip
    for k, m in SWEEP:
        mark = " **(default)**" if (k, m) == DEFAULT else ""
        lines.append(cand_row(f"lexical top_k {k}, min_similarity {m}{mark}",
                              DuplicateJudgeSettings(top_k=k, min_similarity=m), False))  # fmt: skip
    lines.append(cand_row("lexical, question only (no answer), top_k 3, min_similarity 0.05 (for comparison)",
                          DuplicateJudgeSettings(top_k=3, min_similarity=0.05), False, answers=False))  # fmt: skip
    if args.embeddings:
        for k, c in ((3, 0.5), (5, 0.3)):
            lines.append(cand_row(f"embeddings only ({model}) top_k {k}, min_cosine {c}",
                                  DuplicateJudgeSettings(top_k=0, embedding_top_k=k, min_cosine=c), True))  # fmt: skip
        lines.append(cand_row(f"lexical default + embeddings ({model}) top_k 3, min_cosine 0.5 **(default with an "
                              "embedding model)**", DuplicateJudgeSettings(), True))  # fmt: skip
        lines.append(cand_row("the same with cross_language: true (translations asked about too)",
                              DuplicateJudgeSettings(cross_language=True), True))  # fmt: skip
    lines += ["", "The default (top_k 3, min_similarity 0.05) was picked from this sweep, which shows both sets: the "
              "lowest-cost setting whose candidate recall is 1.00 on the labelled set (its Chinese pairs need 0.05; "
              "the held-out set reaches 1.00 at 0.1 too), so the held-out figures are not a clean hold-out for this "
              "one choice. Asking about the question alone, without the answer's words, loses a quarter of the "
              "held-out duplicates (row \"question only\")."]
    misses = []
    for s in SETS:
        labels, pairs, vectors = data[s]
        f = candidate_figures(labels, pairs, DuplicateJudgeSettings(), None)
        for la in LANGS:
            if f[la][2]:
                misses.append(f"{SET_TITLES[s]} {la}: {', '.join(f[la][2])}")
    missed = "; ".join(misses) or "none"
    lines += ["", f"True duplicate pairs the default pre-filter does not propose: {missed}.", ""]

    plumb = {s: plumbing_run(s) for s in SETS}
    lines += ["**3. Plumbing check, not quality**: the filter stage end to end with the judge on, against the tests' "
              "fake OpenAI server answering from the labels (an oracle judge: \"same duplicate group\"), lexical "
              "candidates at the defaults. It shows the candidates, batches, verdicts and groups carry a perfect "
              "judge's answers through; it is not a measure of any model.", "",
              "| figure | " + head[2:], "|---" * (len(cols) + 1) + "|",
              "| duplicates, oracle judge | " + " | ".join(pr(plumb[s][la]) for s, la in cols) + " |",
              "| close-different pairs in a wrong link | " + " | ".join(
                  f"{len(plumb[s][la]['cd_pairs'])}/{plumb[s][la]['n_cd']}" for s, la in cols) + " |", ""]  # fmt: skip
    for s in SETS:
        p = plumb[s]
        st = p["stats"] or {}
        lines.append(f"- {SET_TITLES[s]}: {p['n']} pairs, {st.get('candidates')} candidate pairs in {p['calls']} calls "
                     f"({1000 * p['calls'] / p['n']:.0f} per 1,000 pairs), {st.get('requests')} requests; re-run "
                     f"{p['rerun_calls']} calls; judge errors: {len(p['errors'])}.")  # fmt: skip
        for la in LANGS:
            d = p[la]
            if d["fp_list"] or d["fn_list"]:
                lines.append(f"  - {la}: wrong flags {d['fp_list'] or 'none'}; missed {d['fn_list'] or 'none'}")
    rows, per_pair = scaling()
    lines += ["", "**4. Cost of the pre-filter as the set grows** (synthetic questions and answers, Zipf-distributed "
              "words, default settings, no embeddings; candidates and batches only, no call):", "", *rows, ""]
    lines += ["", *summary(lex, data, plumb, model if args.embeddings else None, per_pair)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
