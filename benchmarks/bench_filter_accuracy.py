"""Benchmark: how well the filters judge the hand-labelled sets, English and Chinese, side by side.

Two sets, in the same format (``tests/fixtures/labelled/README.md``):

- ``labelled`` (``tests/fixtures/labelled``): seven FastAPI tutorial pages per language. The filters were tuned by
  someone who read it, so its figures are optimistic;
- ``heldout`` (``tests/fixtures/heldout``): six other pages, written after the tuning without looking at the
  filters' patterns or thresholds. Its figures are the honest ones; do not tune on it.

Each holds good pairs (a careful expert's), and for each answerable one a verbatim copy of its evidence, a light
edit of that copy and, when its evidence sits in several places, a split copy stitched from pieces of each;
duplicate groups (a good pair and differently worded questions asking the same thing), close-but-different
questions (worded like the good pair of their group, asking something else) and pairs that lean on "the passage".

Everything goes through goldset itself: a set's documents are ingested into a temporary workspace, each quote is
placed in the chunk that holds it, the pairs become ``QAPair`` candidates (the labelled id in ``tags``) in
``data/pairs.jsonl`` and ``goldset.run_filters`` judges them; the verdicts are read back from the file. Five runs
per set, each in its own workspace: the *set* (good + duplicate + close_different: duplicate precision and recall
are measured there) and one per kind of bad pair (verbatim copies, light edits, split copies, self-references): a
copy asks its good pair's question, so in one file they would be one another's duplicates and share an id. These
runs use ``use_llm=False``: every check with its default settings, lexical duplicates only.

``--semantic`` also measures ``filter.checks.duplicate.semantic: true`` against an OpenAI-compatible
``/v1/embeddings`` endpoint (``OPENAI_BASE_URL`` and ``GOLDSET_EMBEDDING_MODEL`` in the environment, e.g.
``benchmarks/embedding_server.py``): the set run is repeated with ``use_llm=True`` and the groundedness judge off,
once per ``semantic_threshold`` of a sweep on the LABELLED set; the threshold is chosen there (the lowest one whose
English precision reaches the target, else the best English F1; ``--semantic-threshold`` fixes it instead) and
applied unchanged to the held-out set.

Measured, per set and language: good pairs not rejected (a flag is not a rejection: flagged pairs still pass,
marked for review; they are counted apart), the share of good pairs each check rejects and flags (a good pair
marked ``duplicate_of`` a member of its own duplicate group is a correct detection, not a rejection); copies
rejected by ``verbatim``; self-references caught by ``self_contained`` (flagged or rejected, said which);
duplicate precision and recall; close-different pairs wrongly flagged. Failing examples are printed.

Run: ``.venv/bin/python benchmarks/bench_filter_accuracy.py [--set labelled|heldout|both] [--semantic] [--write]``
(``--write`` replaces the ``## filters: accuracy on the hand-labelled sets`` section of RESULTS.md; it needs both
sets).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _results import RESULTS, machine, write_section

from goldset.filters.textsim import edit_similarity
from goldset.generation.validation import quote_in_text
from goldset.io import atomic_write_text, read_jsonl, write_jsonl
from goldset.schema import Chunk, Evidence, Provenance, QAPair, pair_id

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures"
SETS = {"labelled": FIXTURES / "labelled", "heldout": FIXTURES / "heldout"}
SET_TITLES = {"labelled": "labelled (tuned on)", "heldout": "held-out"}
SECTION = "## filters: accuracy on the hand-labelled sets"
#: The heading this section had when it covered one set; --write replaces that section.
OLD_SECTION = "## filters: accuracy on the hand-labelled set"
TAG = "labelled:"
LANGS = ("en", "zh")
TYPES = ("factual", "reasoning", "comparison", "multi_hop", "procedural", "unanswerable")
COPY_LABELS = ("verbatim_copy", "light_edit", "split_copy")
#: Labels judged together in the first run (the duplicate figures come from it).
SET_LABELS = ("good", "duplicate", "close_different")
#: The checks that judge copying of the evidence: `verbatim`, and any later check named for it.
VERBATIM_WORDS = ("verbatim", "copy")
SELF_CHECK = "self_contained"
DUP_CHECK = "duplicate"
TARGETS = {
    "good": "≥ 95%",
    "verbatim_copy": "100%",
    "light_edit": "≥ 90%",
    "split_copy": "none set",
    "self_reference": "none set",
    "precision": "≥ 0.95",
    "recall": "≥ 0.95",
}
PRECISION_TARGET = 0.95
#: semantic_threshold values tried on the labelled set.
SWEEP = tuple(round(0.50 + 0.025 * i, 3) for i in range(19))  # 0.50 … 0.95


def load_labels(set_name: str) -> list[dict[str, Any]]:
    with (SETS[set_name] / "pairs.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def to_pair(rec: dict[str, Any], chunks: list[Chunk]) -> QAPair:
    evidence = []
    for e in rec["evidence"]:
        hits = [c for c in chunks if c.doc_id == e["doc_id"] and quote_in_text(e["quote"], c.text)]
        if not hits:
            sys.exit(f"{rec['id']}: quote not found in any chunk of {e['doc_id']}: {e['quote'][:60]!r}")
        evidence.append(Evidence(chunk_id=hits[0].id, doc_id=e["doc_id"], quote=e["quote"]))
    cids = sorted({e.chunk_id for e in evidence})
    return QAPair(
        id=pair_id(cids, rec["question_type"], rec["question"]),
        question=rec["question"],
        answer=rec["answer"],
        question_type=rec["question_type"],
        language=rec["language"],
        evidence=evidence,
        provenance=Provenance(source="human"),
        tags=[TAG + rec["id"], "label:" + rec["label"]],
    )


def run(set_name: str, name: str, records: list[dict[str, Any]], semantic: float | None = None) -> dict[str, QAPair]:
    """Filter ``records`` of a set in a fresh workspace; the judged pairs by labelled id. ``semantic``: a
    semantic_threshold turns semantic duplicates on (embeddings from the environment's endpoint)."""
    with tempfile.TemporaryDirectory(prefix=f"goldset-{set_name}-{name}-") as tmp:
        return _run_in(Path(tmp), set_name, name, records, semantic)


def _semantic_settings(ws_config: Path, threshold: float) -> None:
    """goldset.yaml of the temporary workspace: semantic duplicates at ``threshold``, no groundedness judge (the
    endpoint only serves embeddings)."""
    import yaml

    data = yaml.safe_load(ws_config.read_text(encoding="utf-8")) or {}
    section = data.get("filter") or {}
    checks = section.get("checks") or {}
    # the endpoint serves embeddings only: the duplicate judge (chat) is measured by bench_dedup_judge.py
    checks["duplicate"] = {"semantic": True, "semantic_threshold": threshold, "judge": {"enabled": False}}
    checks["groundedness"] = {"enabled": False}
    section["checks"] = checks
    data["filter"] = section
    atomic_write_text(ws_config, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def _run_in(
    root: Path, set_name: str, name: str, records: list[dict[str, Any]], semantic: float | None
) -> dict[str, QAPair]:
    from goldset import ingest, run_filters
    from goldset.scaffold import init_workspace
    from goldset.workspace import Workspace

    init_workspace(root, dvc=False)
    ws = Workspace(root)
    ingest(SETS[set_name] / "docs", ws)
    if semantic is not None:
        _semantic_settings(ws.config_path, semantic)
    chunks = read_jsonl(ws.kb_dir / "chunks.jsonl", Chunk)
    pairs = [to_pair(r, chunks) for r in records]
    ids = [p.id for p in pairs]
    if len(set(ids)) != len(ids):
        sys.exit(f"{set_name} run {name}: two labelled pairs get the same pair id (same chunks, type and question)")
    write_jsonl(ws.pairs_path, pairs)
    report = run_filters(ws, use_llm=semantic is not None)
    if semantic is not None:
        emb = report.embedding or {}
        if report.judge_errors or not emb.get("calls"):
            sys.exit(f"{set_name} run {name}: embeddings failed or were not asked for ({report.judge_errors}, {emb})")
    judged = read_jsonl(ws.pairs_path, QAPair)
    out = {}
    for p in judged:
        label_id = next(t[len(TAG) :] for t in p.tags if t.startswith(TAG))
        out[label_id] = p
    if len(out) != len(records):
        sys.exit(f"{set_name} run {name}: {len(records)} pairs written, {len(out)} read back")
    sem = f", semantic_threshold {semantic}" if semantic is not None else ""
    print(f"{set_name} run {name}: {len(records)} pairs, checks {', '.join(report.checks)}{sem}; "
          f"skipped {report.skipped_checks}", flush=True)  # fmt: skip
    return out


def judge_all(set_name: str, labels: list[dict[str, Any]]) -> dict[str, QAPair]:
    """The five lexical runs of a set."""
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in labels:
        by_label[r["label"]].append(r)
    verdicts: dict[str, QAPair] = {}
    verdicts.update(run(set_name, "set", [r for lab in SET_LABELS for r in by_label[lab]]))
    for lab in (*COPY_LABELS, "self_reference"):
        verdicts.update(run(set_name, lab, by_label[lab]))
    return verdicts


def failed(p: QAPair) -> dict[str, str]:
    return {name: c.reason for name, c in p.checks.items() if not c.passed}


def is_copy_check(name: str) -> bool:
    return any(w in name for w in VERBATIM_WORDS)


@dataclass
class Share:
    hit: int = 0
    n: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, ok: bool, label_id: str, why: str = "") -> None:
        self.n += 1
        if ok:
            self.hit += 1
        else:
            self.misses.append(f"{label_id}: {why}" if why else label_id)

    def cell(self) -> str:
        if not self.n:
            return "—"
        return f"{self.hit}/{self.n} ({self.hit / self.n:.0%})"


def dup_figures(labels: list[dict[str, Any]], verdicts: dict[str, QAPair]) -> dict[str, Any]:
    """Duplicate precision and recall over the set run's labels (good, duplicate, close_different).

    A flagged pair is a true positive when the pair it duplicates is in its own duplicate group (whichever member
    is kept); any other flag is a false positive; a group of k pairs expects k − 1 flags.
    """
    by_id = {r["id"]: r for r in labels}
    group_of = {r["id"]: r["group"] for r in labels}
    dup_groups = {r["group"] for r in labels if r["label"] == "duplicate"}
    # duplicate_of names a pair of the same run: the set run (copies reuse their good pair's id in other runs).
    id_of_pair = {verdicts[r["id"]].id: r["id"] for r in labels if r["label"] in SET_LABELS}

    def correct_dup(lid: str) -> bool:
        c = verdicts[lid].checks.get(DUP_CHECK)
        if c is None or c.passed or not c.duplicate_of:
            return False
        other = id_of_pair.get(c.duplicate_of)
        return other is not None and group_of[lid] in dup_groups and group_of.get(other) == group_of[lid]

    tp = fp = 0
    fp_list: list[str] = []
    fn_list: list[str] = []
    members: dict[str, list[str]] = defaultdict(list)
    for r in labels:
        if r["group"] in dup_groups:
            members[r["group"]].append(r["id"])
    for r in labels:
        lid = r["id"]
        if r["label"] not in SET_LABELS:
            continue
        c = verdicts[lid].checks.get(DUP_CHECK)
        if c is None or c.passed:
            continue
        if correct_dup(lid):
            tp += 1
        else:
            fp += 1
            other = id_of_pair.get(c.duplicate_of or "", c.duplicate_of)
            fp_list.append(
                f"{lid} ({r['label']}, group {r['group']}) flagged duplicate_of {other} "
                f"({by_id[other]['label'] if other in by_id else '?'}, group {group_of.get(other)})"
            )
    expected = 0
    for g, ids in sorted(members.items()):
        expected += len(ids) - 1
        flagged = [i for i in ids if correct_dup(i)]
        missing = len(ids) - 1 - len(flagged)
        if missing > 0:
            kept = [i for i in ids if i not in flagged]
            fn_list.append(f"group {g}: {missing} of {len(ids) - 1} not flagged (unflagged: {', '.join(kept)})")
    # Close-but-different pairs (and groups) touched by a wrong duplicate flag on any of their members.
    cd_groups: dict[str, list[str]] = defaultdict(list)
    for r in labels:
        if r["group"] is not None and r["group"] not in dup_groups:
            cd_groups[r["group"]].append(r["id"])
    wrong = {x.split(" ", 1)[0] for x in fp_list} | {x.split("duplicate_of ")[1].split(" ", 1)[0] for x in fp_list}
    cd_pairs = [r["id"] for r in labels if r["label"] == "close_different" and r["id"] in wrong]
    cd_merged = sorted(g for g, ids in cd_groups.items() if any(i in wrong for i in ids))
    good_wrong = [r["id"] for r in labels if r["label"] == "good" and DUP_CHECK in failed(verdicts[r["id"]])
                  and not correct_dup(r["id"])]  # fmt: skip
    return {
        "tp": tp, "fp": fp, "expected": expected, "groups": len(members),
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / expected if expected else 1.0,
        "fp_list": fp_list, "fn_list": fn_list, "cd_groups": len(cd_groups), "cd_merged": cd_merged,
        "cd_pairs": cd_pairs, "n_cd": sum(1 for r in labels if r["label"] == "close_different"),
        "good_wrong": good_wrong, "correct_dup": correct_dup,
    }  # fmt: skip


def evaluate(labels: list[dict[str, Any]], verdicts: dict[str, QAPair]) -> dict[str, Any]:
    """All figures for one language's labels of one set."""
    d = dup_figures([r for r in labels if r["label"] in SET_LABELS], verdicts)
    correct_dup = d.pop("correct_dup")

    good = Share()  # not rejected: the pair would be `passed`
    clean = Share()  # no failure and no flag
    flagged_good: list[str] = []
    rejects: dict[str, Share] = defaultdict(Share)
    flags: dict[str, Share] = defaultdict(Share)
    checks_seen: set[str] = set()
    for r in labels:
        if r["label"] != "good":
            continue
        lid = r["id"]
        p = verdicts[lid]
        checks_seen.update(p.checks)
        rej = {n: c.reason for n, c in p.checks.items() if c.rejects and not (n == DUP_CHECK and correct_dup(lid))}
        flg = {n: c.reason for n, c in p.checks.items() if c.flagged}
        good.add(not rej, lid, "; ".join(f"{k}: {v}" for k, v in sorted(rej.items())))
        clean.add(not rej and not flg, lid)
        if flg:
            flagged_good.append(f"{lid}: " + "; ".join(f"{k}: {v}" for k, v in sorted(flg.items())))
        for name in p.checks:
            rejects[name].add(name in rej, lid)
            flags[name].add(name in flg, lid)
    others = Share()  # duplicate / close_different pairs, on every check but duplicate
    for r in labels:
        if r["label"] in ("duplicate", "close_different"):
            fails = {k: v for k, v in failed(verdicts[r["id"]]).items() if k != DUP_CHECK}
            others.add(not fails, r["id"], "; ".join(f"{k}: {v}" for k, v in sorted(fails.items())))

    caught: dict[str, Share] = {lab: Share() for lab in (*COPY_LABELS, "self_reference")}
    caught_any: dict[str, Share] = {lab: Share() for lab in (*COPY_LABELS, "self_reference")}
    self_sev = {"flag": 0, "reject": 0}
    for r in labels:
        lab = r["label"]
        if lab not in caught:
            continue
        p = verdicts[r["id"]]
        fails = failed(p)
        if lab == "self_reference":
            c = p.checks.get(SELF_CHECK)
            ok = c is not None and not c.passed
            if ok and c is not None:
                self_sev[c.severity] += 1
            why = "" if ok else (f"{SELF_CHECK}: {c.reason}" if c is not None else f"{SELF_CHECK} not run")
        else:
            ok = any(is_copy_check(n) and p.checks[n].rejects for n in fails)
            v = p.checks.get("verbatim")
            why = "" if ok else (f"verbatim: {v.reason}" if v is not None else "verbatim not run")
        caught[lab].add(ok, r["id"], why)
        caught_any[lab].add(bool(fails), r["id"], "passes every check")

    anchor = {r["group"]: r for r in labels if r["group"] is not None and r["label"] == "good"}
    sims: dict[str, list[float]] = {"duplicate": [], "close_different": []}
    for r in labels:
        if r["label"] in sims and r["group"] in anchor:
            sims[r["label"]].append(edit_similarity(r["question"], anchor[r["group"]]["question"]))
    return {
        "sims": sims, "good": good, "clean": clean, "flagged_good": flagged_good, "rejects": rejects,
        "flags": flags, "checks": sorted(checks_seen), "others": others, "caught": caught,
        "caught_any": caught_any, "self_sev": self_sev, "dup": d,
    }  # fmt: skip


# ---- semantic duplicates ------------------------------------------------------------------------------------------


def semantic_env() -> str:
    """Check the environment names an embeddings endpoint; the model name. A chat model is never called (the
    judge is off) but goldset's endpoint needs one, so a placeholder is set when none is."""
    missing = [v for v in ("OPENAI_BASE_URL", "GOLDSET_EMBEDDING_MODEL") if not os.environ.get(v)]
    if missing:
        sys.exit(f"--semantic needs {' and '.join(missing)} in the environment (see benchmarks/embedding_server.py)")
    if not (os.environ.get("GOLDSET_JUDGE_MODEL") or os.environ.get("GOLDSET_MODEL")):
        os.environ["GOLDSET_JUDGE_MODEL"] = "unused-chat-model"
    return os.environ["GOLDSET_EMBEDDING_MODEL"]


def semantic_run(set_name: str, labels: list[dict[str, Any]], threshold: float) -> dict[str, dict[str, Any]]:
    """The set run with semantic duplicates at ``threshold``: duplicate figures per language."""
    records = [r for r in labels if r["label"] in SET_LABELS]
    verdicts = run(set_name, f"set-semantic-{threshold}", records, semantic=threshold)
    out = {}
    for lang in LANGS:
        d = dup_figures([r for r in records if r["language"] == lang], verdicts)
        d.pop("correct_dup")
        out[lang] = d
    return out


def f1(d: dict[str, Any]) -> float:
    p, r = d["precision"], d["recall"]
    return 2 * p * r / (p + r) if p + r else 0.0


def choose_threshold(sweep: dict[float, dict[str, dict[str, Any]]]) -> tuple[float, str]:
    """On the labelled set's English pairs: the lowest threshold whose precision reaches the target (the most
    recall the target allows), else the one with the best F1 (ties: the higher threshold)."""
    ok = [t for t in sorted(sweep) if sweep[t]["en"]["tp"] and sweep[t]["en"]["precision"] >= PRECISION_TARGET]
    if ok:
        return ok[0], f"the lowest threshold with English precision ≥ {PRECISION_TARGET} on the labelled set"
    best = max(sorted(sweep), key=lambda t: (round(f1(sweep[t]["en"]), 6), t))
    return best, f"no threshold reaches English precision {PRECISION_TARGET} on the labelled set: the best English F1"


def cosines(labels: list[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """Embedding cosine of each duplicate / close-different question with its group's good question, per language,
    through goldset's own embeddings client (the endpoint of the environment)."""
    import asyncio

    from goldset.llm import LLMClient, resolve_endpoint

    anchor = {r["group"]: r for r in labels if r["group"] is not None and r["label"] == "good"}
    pairs = [(r, anchor[r["group"]]) for r in labels if r["label"] in ("duplicate", "close_different")]
    texts = sorted({q for r, a in pairs for q in (r["question"], a["question"])})

    async def embed() -> list[list[float] | None]:
        async with LLMClient(resolve_endpoint(None, "judge"), None) as client:
            return await client.embed(texts)

    vec = dict(zip(texts, asyncio.run(embed()), strict=True))
    out: dict[str, dict[str, list[float]]] = {lang: {"duplicate": [], "close_different": []} for lang in LANGS}
    for r, a in pairs:
        u, v = vec[r["question"]], vec[a["question"]]
        if u is None or v is None:
            sys.exit("embeddings: a question got no vector")
        dot = sum(x * y for x, y in zip(u, v, strict=True))
        norm = math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v))
        out[r["language"]][r["label"]].append(dot / norm)
    return out


# ---- output -------------------------------------------------------------------------------------------------------


def counts_table(all_labels: dict[str, list[dict[str, Any]]]) -> str:
    names = list(all_labels)
    head = "| label | " + " | ".join(f"{SET_TITLES[s]} {lang}" for s in names for lang in LANGS) + " |"
    sep = "|---|" + "---|" * (len(names) * len(LANGS))

    def n(s: str, lang: str, pred: Callable[[dict[str, Any]], bool]) -> int:
        return sum(1 for r in all_labels[s] if r["language"] == lang and pred(r))

    rows = [head, sep]
    for lab in ("good", *COPY_LABELS, "duplicate", "close_different", "self_reference"):
        rows.append(f"| {lab} | " + " | ".join(str(n(s, lang, lambda r, lab=lab: r["label"] == lab))
                                              for s in names for lang in LANGS) + " |")  # fmt: skip
    for qt in TYPES:
        rows.append(f"| good: {qt} | " + " | ".join(
            str(n(s, lang, lambda r, qt=qt: r["label"] == "good" and r["question_type"] == qt))
            for s in names for lang in LANGS) + " |")  # fmt: skip
    for kind, title in (("duplicate", "duplicate groups"), ("close_different", "close-but-different groups")):
        rows.append(f"| {title} | " + " | ".join(
            str(len({r["group"] for r in all_labels[s] if r["language"] == lang and r["label"] == kind}))
            for s in names for lang in LANGS) + " |")  # fmt: skip
    return "\n".join(rows)


def print_failures(name: str, res: dict[str, Any]) -> None:
    print(f"\n==== {name}")
    print(f"-- good pairs rejected ({len(res['good'].misses)}):")
    for m in res["good"].misses:
        print("   ", m)
    print(f"-- good pairs flagged, still passing ({len(res['flagged_good'])}):")
    for m in res["flagged_good"]:
        print("   ", m)
    for lab, share in res["caught"].items():
        print(f"-- {lab} not caught ({len(share.misses)}):")
        for m in share.misses:
            print("   ", m)
    d = res["dup"]
    print(f"-- duplicate false positives ({len(d['fp_list'])}):")
    for m in d["fp_list"]:
        print("   ", m)
    print(f"-- duplicate false negatives ({d['expected'] - d['tp']}):")
    for m in d["fn_list"]:
        print("   ", m)
    print(f"-- duplicate / close_different pairs failing another check ({len(res['others'].misses)}):")
    for m in res["others"].misses:
        print("   ", m)


def spread(values: list[float]) -> str:
    if not values:
        return "—"
    v = sorted(values)
    return f"{v[0]:.2f} / {statistics.median(v):.2f} / {v[-1]:.2f}"


def goldset_commit() -> str:
    """The last commit that changed goldset's code (what these figures measure), and whether it has local edits."""
    root = HERE.parent
    try:
        last = subprocess.run(
            ["git", "log", "-1", "--format=%h (%cs)", "--", "goldset"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "goldset"], cwd=root, capture_output=True, text=True
        )
    except OSError:
        return "unknown (git not available)"
    if not last:
        return "unknown (not a git checkout)"
    return last + (" with uncommitted changes" if dirty.stdout.strip() else "")


def short_ids(misses: list[str]) -> str:
    return ", ".join(m.split(":", 1)[0] for m in misses) or "none"


def dup_cell(d: dict[str, Any], what: str) -> str:
    if what == "precision":
        if not d["tp"] + d["fp"]:
            return "— (no flags)"
        return f"{d['precision']:.2f} ({d['tp']} of {d['tp'] + d['fp']} flags)"
    return f"{d['recall']:.2f} ({d['tp']} of {d['expected']})"


def target_misses(title: str, r: dict[str, Any] | None, d: dict[str, Any]) -> list[str]:
    """The targeted figures of one set and language that miss their target (``r``: lexical results, None for the
    semantic duplicate figures ``d``)."""
    out = []
    if r is not None:
        for key, share, need in (("good", r["good"], 0.95), ("verbatim_copy", r["caught"]["verbatim_copy"], 1.0),
                                 ("light_edit", r["caught"]["light_edit"], 0.9)):  # fmt: skip
            if share.n and share.hit / share.n < need:
                out.append(f"{title}: {key} {share.cell()} (target {TARGETS[key]})")
    kind = "semantic " if r is None else ""
    if d["tp"] + d["fp"] and d["precision"] < PRECISION_TARGET:
        out.append(f"{title}: {kind}duplicate precision {dup_cell(d, 'precision')} (target {TARGETS['precision']})")
    if d["recall"] < 0.95:
        out.append(f"{title}: {kind}duplicate recall {dup_cell(d, 'recall')} (target {TARGETS['recall']})")
    if d["cd_pairs"]:
        out.append(f"{title}: {kind}close-different pairs in a wrong duplicate link {len(d['cd_pairs'])} "
                   f"({', '.join(d['cd_pairs'])}; target 0)")  # fmt: skip
    if d["good_wrong"]:
        out.append(f"{title}: {kind}good pairs wrongly rejected as duplicates {len(d['good_wrong'])} "
                   f"({', '.join(d['good_wrong'])}; target 0)")  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=("labelled", "heldout", "both"), default="both", help="which set(s) to judge")
    ap.add_argument("--semantic", action="store_true",
                    help="also measure semantic duplicates (OPENAI_BASE_URL + GOLDSET_EMBEDDING_MODEL)")  # fmt: skip
    ap.add_argument("--semantic-threshold", type=float, default=None,
                    help="this semantic_threshold instead of one chosen by a sweep on the labelled set")  # fmt: skip
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of RESULTS.md")
    ap.add_argument("--note", default="", help="a sentence put at the top of the section (e.g. what code this is)")
    args = ap.parse_args()
    names = ["labelled", "heldout"] if args.set == "both" else [args.set]
    if args.write and len(names) != 2:
        ap.error("--write needs both sets (--set both): the section shows them side by side")
    model = semantic_env() if args.semantic else None

    all_labels = {s: load_labels(s) for s in names}
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for s in names:
        verdicts = judge_all(s, all_labels[s])
        for lang in LANGS:
            results[(s, lang)] = evaluate([r for r in all_labels[s] if r["language"] == lang], verdicts)
    for s in names:
        for lang in LANGS:
            print_failures(f"{s} {lang}", results[(s, lang)])
    cols = [(s, lang) for s in names for lang in LANGS]

    def row(title: str, get: Callable[[dict[str, Any]], str], target: str) -> str:
        return f"| {title} | " + " | ".join(get(results[c]) for c in cols) + f" | {target} |"

    def self_cell(r: dict[str, Any]) -> str:
        sev = r["self_sev"]
        return f"{r['caught']['self_reference'].cell()}: {sev['flag']} flagged, {sev['reject']} rejected"

    head = "| figure | " + " | ".join(f"{SET_TITLES[s]} {lang}" for s, lang in cols) + " | target |"
    sep = "|---|" + "---|" * len(cols) + "---|"
    main_rows = [
        head, sep,
        row("good pairs not rejected (they pass; flags allowed)", lambda r: r["good"].cell(), TARGETS["good"]),
        row("good pairs flagged for review (not rejected)", lambda r: f"{len(r['flagged_good'])}", "—"),
        row("good pairs with no failure and no flag", lambda r: r["clean"].cell(), "—"),
        row("verbatim copies rejected (verbatim)", lambda r: r["caught"]["verbatim_copy"].cell(),
            TARGETS["verbatim_copy"]),
        row("light edits rejected (verbatim)", lambda r: r["caught"]["light_edit"].cell(), TARGETS["light_edit"]),
        row("split copies rejected (verbatim)", lambda r: r["caught"]["split_copy"].cell(), TARGETS["split_copy"]),
        row("self-references caught (self_contained)", self_cell, TARGETS["self_reference"]),
        row("duplicate precision (lexical)", lambda r: dup_cell(r["dup"], "precision"), TARGETS["precision"]),
        row("duplicate recall (lexical)", lambda r: dup_cell(r["dup"], "recall"), TARGETS["recall"]),
        row("close-different pairs in a wrong duplicate link (groups touched)",
            lambda r: f"{len(r['dup']['cd_pairs'])}/{r['dup']['n_cd']} ({len(r['dup']['cd_merged'])}/"
            f"{r['dup']['cd_groups']})", "0"),
        row("question edit similarity, duplicates vs their group's good pair, min / median / max",
            lambda r: spread(r["sims"]["duplicate"]), "—"),
        row("same for close-different pairs", lambda r: spread(r["sims"]["close_different"]), "—"),
        row("duplicate + close-different pairs failing no other check", lambda r: r["others"].cell(), "—"),
    ]  # fmt: skip
    any_rows = ["| caught by any check (for comparison) | " + " | ".join(f"{SET_TITLES[s]} {lang}" for s, lang in cols)
                + " |", "|---|" + "---|" * len(cols)]  # fmt: skip
    for lab in (*COPY_LABELS, "self_reference"):
        any_rows.append(f"| {lab} | " + " | ".join(results[c]["caught_any"][lab].cell() for c in cols) + " |")
    check_names = sorted({n for c in cols for n in results[c]["checks"]})
    check_rows = ["| check | " + " | ".join(f"{SET_TITLES[s]} {lang}" for s, lang in cols) + " |",
                  "|---|" + "---|" * len(cols)]  # fmt: skip
    for name in check_names:
        cells = []
        for c in cols:
            rj, fl = results[c]["rejects"].get(name), results[c]["flags"].get(name)
            n = rj.n if rj else 0
            cells.append(f"{rj.hit if rj else 0} / {fl.hit if fl else 0} of {n}" if n else "—")
        check_rows.append(f"| {name} | " + " | ".join(cells) + " |")
    fail_lines = []
    for s, lang in cols:
        r = results[(s, lang)]
        by_check: dict[str, list[str]] = defaultdict(list)
        for m in r["good"].misses:
            lid, why = m.split(": ", 1)
            for part in why.split("; "):
                check = part.split(":", 1)[0]
                if check in check_names:
                    by_check[check].append(lid)
        rejected = "; ".join(f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(by_check.items())) or "none"
        by_flag: dict[str, list[str]] = defaultdict(list)
        for m in r["flagged_good"]:
            lid, why = m.split(": ", 1)
            for part in why.split("; "):
                check = part.split(":", 1)[0]
                if check in check_names:
                    by_flag[check].append(lid)
        flagged = "; ".join(f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(by_flag.items())) or "none"
        t = f"{SET_TITLES[s]} {lang}"
        fail_lines.append(f"- {t}, good pairs rejected — {rejected}")
        fail_lines.append(f"- {t}, good pairs flagged — {flagged}")
        for lab in (*COPY_LABELS, "self_reference"):
            fail_lines.append(f"- {t}, {lab} not caught — {short_ids(r['caught'][lab].misses)}")
        d = r["dup"]
        fps = "; ".join(x.split(" flagged ")[0].split(" (")[0] + " → " + x.split("duplicate_of ")[1].split(" (")[0]
                        for x in d["fp_list"]) or "none"  # fmt: skip
        fail_lines.append(f"- {t}, duplicate false positives (pair → pair it was called a duplicate of) — {fps}")
        fns = "; ".join(x.split(" (unflagged")[0] for x in d["fn_list"]) or "none"
        fail_lines.append(f"- {t}, duplicate groups not fully found — {fns}")

    misses = [m for s, lang in cols for m in target_misses(f"{SET_TITLES[s]} {lang}", results[(s, lang)],
                                                           results[(s, lang)]["dup"])]  # fmt: skip
    if model:
        semantic_text, semantic_misses = semantic_section(args, all_labels, model)
        misses += semantic_misses
    else:
        semantic_text = ("Semantic duplicates: not measured in this run (`--semantic` with an embeddings endpoint, "
                         "see `benchmarks/embedding_server.py`).")  # fmt: skip

    note = f"**{args.note.strip()}**\n" if args.note.strip() else ""
    n_docs = {s: len(list((SETS[s] / "docs" / "en").glob("*.md"))) for s in names}
    sets_line = "; ".join(f"{SET_TITLES[s]}: `{SETS[s].relative_to(HERE.parent)}/pairs.jsonl`, {n_docs[s]} FastAPI "
                          "tutorial pages in English and the same in Chinese" for s in names)  # fmt: skip
    text = f"""{SECTION}
Machine: {machine()}. Script: `benchmarks/bench_filter_accuracy.py` (`--write` updates this section).

Code measured: goldset as of commit {goldset_commit()} (the last commit that touched `goldset/`).
{note}Two hand-labelled sets in one format ({sets_line}). The filters were tuned by someone who read the labelled
set, so its figures are optimistic; the held-out set was written afterwards, over other pages, without looking at
the filters' patterns or thresholds (`tests/fixtures/heldout/README.md`): its figures are the ones to trust.

{counts_table(all_labels)}

Method: a set's pages are ingested with goldset into a temporary workspace, each quote is placed in the chunk that
holds it, the pairs are written as `candidate` `QAPair`s and `goldset.run_filters(ws, use_llm=False)` judges them
(every check with its default settings and severities, no LLM judge, lexical duplicates only). Five runs per set,
one workspace each: good + duplicate + close-different pairs together (the duplicate figures come from this run),
then verbatim copies, light edits, split copies and self-references, each kind alone (a copy asks its good pair's
question, so in one file they would be one another's duplicates). A good pair "passes" unless a check with severity
`reject` fails (a failed `flag` check lets it pass, marked for review; flags are counted apart). A copy counts as
caught when `verbatim` rejects it; a self-reference when `self_contained` fails (its default severity is `flag`, so
"caught" there means flagged for review, not removed). A pair flagged `duplicate_of` a member of its own duplicate
group is a true positive (whichever member is kept) and does not count against a good pair; any other flag is a
false positive; a group of k pairs expects k − 1 flags, and the flags it lacks are false negatives.

{chr(10).join(main_rows)}

Good pairs each check rejects / flags (rejected / flagged of good pairs; `duplicate` counts only wrong flags):

{chr(10).join(check_rows)}

{chr(10).join(any_rows)}

{semantic_text}

Figures that miss their target:

{chr(10).join("- " + m for m in misses) or "none"}

Failing examples (ids of the set's `pairs.jsonl`; the script prints each with its reason):

{chr(10).join(fail_lines)}
"""
    print("\n" + text)
    if args.write:
        current = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
        if f"\n{OLD_SECTION}\n" in current:  # the one-set section this one replaces
            atomic_write_text(RESULTS, current.replace(f"\n{OLD_SECTION}\n", f"\n{SECTION}\n", 1))
        write_section(text)
        print("wrote the section to benchmarks/RESULTS.md")


def semantic_section(
    args: argparse.Namespace, all_labels: dict[str, list[dict[str, Any]]], model: str
) -> tuple[str, list[str]]:
    """Semantic duplicates: the sweep on the labelled set, the chosen threshold, and it applied to the held-out set;
    the text and the figures at the chosen threshold that miss their target."""
    lines = [f"Semantic duplicates (`filter.checks.duplicate: {{semantic: true, semantic_threshold: T}}`, embeddings "
             f"of model `{model}` from `{os.environ['OPENAI_BASE_URL']}`; the set run repeated with `use_llm=True` and "
             "the groundedness judge off; lexical duplicates stay on):"]  # fmt: skip
    sweep: dict[float, dict[str, dict[str, Any]]] = {}
    if "labelled" in all_labels:
        thresholds = [args.semantic_threshold] if args.semantic_threshold is not None else list(SWEEP)
        for t in thresholds:
            sweep[t] = semantic_run("labelled", all_labels["labelled"], t)
    alt: float | None = None
    if args.semantic_threshold is not None:
        chosen, why = args.semantic_threshold, "given with --semantic-threshold"
    elif sweep:
        chosen, why = choose_threshold(sweep)
        alt = max(sorted(sweep), key=lambda t: (round(f1(sweep[t]["en"]), 6), t))
    else:
        sys.exit("--semantic on the held-out set alone needs --semantic-threshold (chosen on the labelled set)")
    if sweep:
        lines += ["", "Sweep on the labelled set (precision (flags) / recall / close-different pairs wrongly "
                  "flagged / good pairs wrongly rejected as duplicates):", "",
                  "| semantic_threshold | en precision | en recall | en cd wrong | en good wrong | zh precision | "
                  "zh recall | zh cd wrong | zh good wrong |", "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for t in sorted(sweep):
            cells = []
            for lang in LANGS:
                d = sweep[t][lang]
                prec = f"{d['precision']:.2f} ({d['tp'] + d['fp']})" if d["tp"] + d["fp"] else "— (0)"
                cells += [prec, f"{d['recall']:.2f}",
                          f"{len(d['cd_pairs'])}/{d['n_cd']}", str(len(d["good_wrong"]))]  # fmt: skip
            mark = " **(chosen)**" if t == chosen else " (best F1)" if t == alt else ""
            lines.append(f"| {t:.3f}{mark} | " + " | ".join(cells) + " |")
    cols = [(s, lang) for s in all_labels for lang in LANGS]
    cos = {s: cosines(all_labels[s]) for s in all_labels}
    lines += ["", "Cosine of each duplicate / close-different question with its group's good question (the measure the "
              "threshold cuts; the two ranges overlap):", "",
              "| cosine, min / median / max | " + " | ".join(f"{SET_TITLES[s]} {lang}" for s, lang in cols) + " |",
              "|---|" + "---|" * len(cols)]  # fmt: skip
    for kind, title in (("duplicate", "duplicates"), ("close_different", "close-different")):
        lines.append(f"| {title} | " + " | ".join(spread(cos[s][lang][kind]) for s, lang in cols) + " |")
    shown = [(chosen, f"Chosen: semantic_threshold {chosen} ({why}), applied unchanged to the held-out set:")]
    if alt is not None and alt != chosen:
        shown.append((alt, f"For comparison, the threshold with the best English F1 on the labelled set, {alt}, "
                           "applied the same way (not the chosen one):"))  # fmt: skip
    misses: list[str] = []
    for t, title in shown:
        results = {s: sweep[t] if s == "labelled" and t in sweep else semantic_run(s, all_labels[s], t)
                   for s in all_labels}  # fmt: skip
        if t == chosen:
            misses = [m for s, lang in cols
                      for m in target_misses(f"{SET_TITLES[s]} {lang} at {t}", None, results[s][lang])]  # fmt: skip
        lines += ["", title, "",
                  "| figure | " + " | ".join(f"{SET_TITLES[s]} {lang}" for s, lang in cols) + " | target |",
                  "|---|" + "---|" * len(cols) + "---|"]  # fmt: skip
        for label, get, target in (
            ("duplicate precision", lambda d: dup_cell(d, "precision"), TARGETS["precision"]),
            ("duplicate recall", lambda d: dup_cell(d, "recall"), TARGETS["recall"]),
            ("close-different pairs in a wrong duplicate link (groups touched)",
             lambda d: f"{len(d['cd_pairs'])}/{d['n_cd']} ({len(d['cd_merged'])}/{d['cd_groups']})", "0"),
            ("good pairs wrongly rejected as duplicates", lambda d: str(len(d["good_wrong"])), "0"),
        ):  # fmt: skip
            lines.append(f"| {label} | " + " | ".join(get(results[s][lang]) for s, lang in cols) + f" | {target} |")
        lines += ["", f"Failing examples at {t}:", ""]
        for s, lang in cols:
            d = results[s][lang]
            fps = "; ".join(x.split(" flagged ")[0].split(" (")[0] + " → "
                            + x.split("duplicate_of ")[1].split(" (")[0] for x in d["fp_list"]) or "none"  # fmt: skip
            fns = "; ".join(x.split(" (unflagged")[0] for x in d["fn_list"]) or "none"
            lines.append(f"- {SET_TITLES[s]} {lang}: false positives — {fps}; groups not fully found — {fns}")
    print("\n".join(lines))
    return "\n".join(lines), misses


if __name__ == "__main__":
    main()
