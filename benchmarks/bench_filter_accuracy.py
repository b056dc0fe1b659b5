"""Benchmark: how well the filters judge a hand-labelled set (``tests/fixtures/labelled``), English and Chinese.

The set was written by hand over seven FastAPI tutorial pages in each language: good pairs (a careful expert's),
and for each answerable one a verbatim copy of its evidence, a light edit of that copy and, when its evidence sits
in several places, a split copy stitched from pieces of each; duplicate groups (a good pair and differently worded
questions asking the same thing), close-but-different questions (worded like a pair of their group, asking
something else) and pairs that lean on "the passage". See ``tests/fixtures/labelled/README.md``.

Everything goes through goldset itself: the documents are ingested into a temporary workspace, each quote is
placed in the chunk that holds it, the pairs become ``QAPair`` candidates (the labelled id in ``tags``) in
``data/pairs.jsonl`` and ``goldset.run_filters(ws, use_llm=False)`` judges them; the verdicts are read back from the
file. Five runs, each in its own workspace: the *set* (good + duplicate + close_different: duplicate precision and
recall are measured there) and one per kind of bad pair (verbatim copies, light edits, split copies, self-references):
a copy asks its good pair's question, so in one file they would be one another's duplicates and share an id.

Measured, per language and overall: good pairs passing every check (a good pair marked ``duplicate_of`` a member
of its own duplicate group is a correct detection, not a rejection) and the share of good pairs each check
rejects; copies caught by the verbatim-type checks; self-references caught by ``self_contained``; duplicate
precision and recall. Failing examples are printed.

Run: ``.venv/bin/python benchmarks/bench_filter_accuracy.py [--write]`` (``--write`` replaces the
``## filters: accuracy on the hand-labelled set`` section of RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _results import machine, write_section

from goldset.filters.textsim import edit_similarity
from goldset.generation.validation import quote_in_text
from goldset.io import read_jsonl, write_jsonl
from goldset.schema import Chunk, Evidence, Provenance, QAPair, pair_id

HERE = Path(__file__).resolve().parent
LABELLED = HERE.parent / "tests" / "fixtures" / "labelled"
SECTION = "## filters: accuracy on the hand-labelled set"
TAG = "labelled:"
LANGS = ("en", "zh")
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


def load_labels() -> list[dict[str, Any]]:
    with (LABELLED / "pairs.jsonl").open(encoding="utf-8") as f:
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


def run(name: str, records: list[dict[str, Any]]) -> dict[str, QAPair]:
    """Filter ``records`` in a fresh workspace; the judged pairs by labelled id."""
    with tempfile.TemporaryDirectory(prefix=f"goldset-labelled-{name}-") as tmp:
        return _run_in(Path(tmp), name, records)


def _run_in(root: Path, name: str, records: list[dict[str, Any]]) -> dict[str, QAPair]:
    from goldset import ingest, run_filters
    from goldset.workspace import Workspace, init_workspace

    init_workspace(root, dvc=False)
    ws = Workspace(root)
    ingest(LABELLED / "docs", ws)
    chunks = read_jsonl(ws.kb_dir / "chunks.jsonl", Chunk)
    pairs = [to_pair(r, chunks) for r in records]
    ids = [p.id for p in pairs]
    if len(set(ids)) != len(ids):
        sys.exit(f"run {name}: two labelled pairs get the same pair id (same chunks, type and question)")
    write_jsonl(ws.pairs_path, pairs)
    report = run_filters(ws, use_llm=False)
    judged = read_jsonl(ws.pairs_path, QAPair)
    out = {}
    for p in judged:
        label_id = next(t[len(TAG) :] for t in p.tags if t.startswith(TAG))
        out[label_id] = p
    if len(out) != len(records):
        sys.exit(f"run {name}: {len(records)} pairs written, {len(out)} read back")
    print(f"run {name}: {len(records)} pairs, checks {', '.join(report.checks)}; skipped {report.skipped_checks}")
    return out


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

    def pct(self) -> float:
        return self.hit / self.n if self.n else float("nan")


def evaluate(labels: list[dict[str, Any]], verdicts: dict[str, QAPair]) -> dict[str, Any]:
    """All figures for one language's (or all) labels."""
    by_id = {r["id"]: r for r in labels}
    group_of = {r["id"]: r["group"] for r in labels}
    dup_groups = {r["group"] for r in labels if r["label"] == "duplicate"}
    # duplicate_of names a pair of the same run: the set run (copies reuse their good pair's id in other runs).
    id_of_pair = {verdicts[r["id"]].id: r["id"] for r in labels if r["label"] in SET_LABELS}

    def correct_dup(lid: str) -> bool:
        """Flagged duplicate_of a member of its own duplicate group."""
        c = verdicts[lid].checks.get(DUP_CHECK)
        if c is None or c.passed or not c.duplicate_of:
            return False
        other = id_of_pair.get(c.duplicate_of)
        return other is not None and group_of[lid] in dup_groups and group_of.get(other) == group_of[lid]

    good = Share()
    per_check: dict[str, Share] = defaultdict(Share)
    checks_seen: set[str] = set()
    for r in labels:
        if r["label"] != "good":
            continue
        lid = r["id"]
        fails = failed(verdicts[lid])
        checks_seen.update(verdicts[lid].checks)
        if DUP_CHECK in fails and correct_dup(lid):
            del fails[DUP_CHECK]
        good.add(not fails, lid, "; ".join(f"{k}: {v}" for k, v in sorted(fails.items())))
        for name in verdicts[lid].checks:
            per_check[name].add(name not in fails, lid, fails.get(name, ""))
    # per_check counts passes; the table shows rejections (n - hit).
    others = Share()  # duplicate / close_different pairs, on every check but duplicate
    for r in labels:
        if r["label"] in ("duplicate", "close_different"):
            fails = {k: v for k, v in failed(verdicts[r["id"]]).items() if k != DUP_CHECK}
            others.add(not fails, r["id"], "; ".join(f"{k}: {v}" for k, v in sorted(fails.items())))

    caught: dict[str, Share] = {lab: Share() for lab in COPY_LABELS}
    caught_any: dict[str, Share] = {lab: Share() for lab in (*COPY_LABELS, "self_reference")}
    caught["self_reference"] = Share()
    for r in labels:
        lab = r["label"]
        if lab not in caught:
            continue
        p = verdicts[r["id"]]
        fails = failed(p)
        if lab == "self_reference":
            ok = SELF_CHECK in fails
            why = "" if ok else f"{SELF_CHECK}: {p.checks[SELF_CHECK].reason}" if SELF_CHECK in p.checks else "not run"
        else:
            ok = any(is_copy_check(n) for n in fails)
            v = p.checks.get("verbatim")
            why = "" if ok else (f"verbatim: {v.reason}" if v is not None else "verbatim not run")
        caught[lab].add(ok, r["id"], why)
        caught_any[lab].add(bool(fails), r["id"], "passes every check")

    # Duplicates: a flagged pair is a true positive when the pair it duplicates is in its own duplicate group.
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
    fn = max(0, expected - tp)
    # Close-but-different groups merged by a wrong duplicate flag on any of their members.
    cd_groups: dict[str, list[str]] = defaultdict(list)
    for r in labels:
        if r["group"] is not None and r["group"] not in dup_groups:
            cd_groups[r["group"]].append(r["id"])
    cd_merged = sorted(g for g, ids in cd_groups.items() if any(not verdicts[i].checks[DUP_CHECK].passed for i in ids))
    # The duplicate check's own measure between each duplicate / close-different pair and its group's good pair.
    anchor = {r["group"]: r for r in labels if r["group"] is not None and r["label"] == "good"}
    sims: dict[str, list[float]] = {"duplicate": [], "close_different": []}
    for r in labels:
        if r["label"] in sims and r["group"] in anchor:
            sims[r["label"]].append(edit_similarity(r["question"], anchor[r["group"]]["question"]))
    return {
        "sims": sims,
        "good": good,
        "per_check": per_check,
        "checks": sorted(checks_seen),
        "others": others,
        "caught": caught,
        "caught_any": caught_any,
        "dup": {
            "tp": tp, "fp": fp, "fn": fn, "expected": expected, "groups": len(members),
            "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / expected if expected else 1.0,
            "fp_list": fp_list, "fn_list": fn_list, "cd_groups": len(cd_groups), "cd_merged": cd_merged,
        },
    }  # fmt: skip


def counts_table(labels: list[dict[str, Any]]) -> str:
    order = ["good", *COPY_LABELS, "duplicate", "close_different", "self_reference"]
    rows = ["| label | en | zh |", "|---|---|---|"]
    for lab in order:
        n = {lang: sum(1 for r in labels if r["label"] == lab and r["language"] == lang) for lang in LANGS}
        rows.append(f"| {lab} | {n['en']} | {n['zh']} |")
    types = ["| good pairs by type | en | zh |", "|---|---|---|"]
    for qt in ("factual", "reasoning", "comparison", "multi_hop", "procedural", "unanswerable"):
        n = {
            lang: sum(1 for r in labels if r["label"] == "good" and r["language"] == lang and r["question_type"] == qt)
            for lang in LANGS
        }
        types.append(f"| {qt} | {n['en']} | {n['zh']} |")
    groups = {
        lang: (
            len({r["group"] for r in labels if r["language"] == lang and r["label"] == "duplicate"}),
            len({r["group"] for r in labels if r["language"] == lang and r["label"] == "close_different"}),
        )
        for lang in LANGS
    }
    gl = (
        f"Duplicate groups: en {groups['en'][0]}, zh {groups['zh'][0]}; close-but-different groups: en "
        f"{groups['en'][1]}, zh {groups['zh'][1]}."
    )
    return "\n".join(rows) + "\n\n" + "\n".join(types) + "\n\n" + gl


def print_failures(name: str, res: dict[str, Any]) -> None:
    print(f"\n==== {name}")
    print(f"-- good pairs rejected ({len(res['good'].misses)}):")
    for m in res["good"].misses:
        print("   ", m)
    for lab, share in res["caught"].items():
        print(f"-- {lab} not caught ({len(share.misses)}):")
        for m in share.misses:
            print("   ", m)
    d = res["dup"]
    print(f"-- duplicate false positives ({len(d['fp_list'])}):")
    for m in d["fp_list"]:
        print("   ", m)
    print(f"-- duplicate false negatives ({d['fn']}):")
    for m in d["fn_list"]:
        print("   ", m)
    print(f"-- duplicate / close_different pairs rejected by another check ({len(res['others'].misses)}):")
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of RESULTS.md")
    ap.add_argument("--note", default="", help="a sentence put at the top of the section (e.g. what code this is)")
    args = ap.parse_args()
    labels = load_labels()
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in labels:
        by_label[r["label"]].append(r)

    verdicts: dict[str, QAPair] = {}
    verdicts.update(run("set", by_label["good"] + by_label["duplicate"] + by_label["close_different"]))
    for lab in (*COPY_LABELS, "self_reference"):
        verdicts.update(run(lab, by_label[lab]))

    scopes = {lang: [r for r in labels if r["language"] == lang] for lang in LANGS}
    scopes["all"] = labels
    results = {name: evaluate(recs, verdicts) for name, recs in scopes.items()}
    for name in ("en", "zh"):
        print_failures(name, results[name])

    cols = ("en", "zh", "all")

    def row(title: str, get: Any, target: str) -> str:
        return f"| {title} | " + " | ".join(get(results[c]) for c in cols) + f" | {target} |"

    main_rows = [
        "| figure | en | zh | all | target |",
        "|---|---|---|---|---|",
        row("good pairs passing every check", lambda r: r["good"].cell(), TARGETS["good"]),
        row("verbatim copies caught (verbatim)", lambda r: r["caught"]["verbatim_copy"].cell(),
            TARGETS["verbatim_copy"]),
        row("light edits caught (verbatim)", lambda r: r["caught"]["light_edit"].cell(), TARGETS["light_edit"]),
        row("split copies caught (verbatim)", lambda r: r["caught"]["split_copy"].cell(), TARGETS["split_copy"]),
        row("self-references caught (self_contained)", lambda r: r["caught"]["self_reference"].cell(),
            TARGETS["self_reference"]),
        row("duplicate precision", lambda r: f"{r['dup']['precision']:.2f} ({r['dup']['tp']} of "
            f"{r['dup']['tp'] + r['dup']['fp']} flags)", TARGETS["precision"]),
        row("duplicate recall", lambda r: f"{r['dup']['recall']:.2f} ({r['dup']['tp']} of {r['dup']['expected']})",
            TARGETS["recall"]),
        row("close-but-different groups with a false duplicate flag",
            lambda r: f"{len(r['dup']['cd_merged'])}/{r['dup']['cd_groups']}", "0"),
        row("question similarity of duplicates to their group's good pair, min / median / max",
            lambda r: spread(r["sims"]["duplicate"]), "flagged at ≥ 0.85"),
        row("same for close-different pairs", lambda r: spread(r["sims"]["close_different"]), "below 0.85"),
        row("duplicate + close-different pairs passing every other check", lambda r: r["others"].cell(), ""),
    ]  # fmt: skip
    any_rows = [
        "| caught by any check (for comparison) | en | zh | all |",
        "|---|---|---|---|",
    ]
    for lab in (*COPY_LABELS, "self_reference"):
        any_rows.append(f"| {lab} | " + " | ".join(results[c]["caught_any"][lab].cell() for c in cols) + " |")
    check_names = results["all"]["checks"]
    check_rows = ["| check | en | zh | all |", "|---|---|---|---|"]
    for name in check_names:
        cells = []
        for c in cols:
            s = results[c]["per_check"].get(name)
            cells.append(f"{s.n - s.hit}/{s.n} ({(s.n - s.hit) / s.n:.0%})" if s and s.n else "—")
        check_rows.append(f"| {name} | " + " | ".join(cells) + " |")
    fail_lines = []
    for lang in LANGS:
        r = results[lang]
        by_check: dict[str, list[str]] = defaultdict(list)
        for m in r["good"].misses:
            lid, why = m.split(": ", 1)
            for part in why.split("; "):
                check = part.split(":", 1)[0]
                if check in check_names:
                    by_check[check].append(lid)
        rejected = "; ".join(f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(by_check.items())) or "none"
        fail_lines.append(f"- {lang}, good pairs rejected — {rejected}")
        for lab in (*COPY_LABELS, "self_reference"):
            fail_lines.append(f"- {lang}, {lab} not caught — {short_ids(r['caught'][lab].misses)}")
        d = r["dup"]
        fps = "; ".join(x.split(" flagged ")[0].split(" (")[0] + " → " + x.split("duplicate_of ")[1].split(" (")[0]
                        for x in d["fp_list"]) or "none"  # fmt: skip
        fail_lines.append(f"- {lang}, duplicate false positives (pair → pair it was called a duplicate of) — {fps}")
        fns = "; ".join(x.split(" (unflagged")[0] for x in d["fn_list"]) or "none"
        fail_lines.append(f"- {lang}, duplicate groups not fully found — {fns}")

    note = f"**{args.note.strip()}**\n" if args.note.strip() else ""
    n_docs = {lang: len(list((LABELLED / "docs" / lang).glob("*.md"))) for lang in LANGS}
    text = f"""{SECTION}
Machine: {machine()}. Script: `benchmarks/bench_filter_accuracy.py` (`--write` updates this section).

Code measured: goldset as of commit {goldset_commit()} (the last commit that touched `goldset/`).
{note}The set is `tests/fixtures/labelled/pairs.jsonl`, written by hand over {n_docs["en"]} English and
{n_docs["zh"]} Chinese FastAPI tutorial pages (`tests/fixtures/labelled/README.md`):

{counts_table(labels)}

Method: the pages are ingested with goldset into a temporary workspace, each quote is placed in the chunk that holds
it, the pairs are written as `candidate` `QAPair`s and `goldset.run_filters(ws, use_llm=False)` judges them (every
check with its default settings but the LLM groundedness judge; lexical duplicates only). Five runs, one workspace
each: good + duplicate + close-different pairs together (the duplicate figures come from this run), then verbatim
copies, light edits, split copies and self-references, each kind alone (a copy asks its good pair's question, so in
one file they would be one another's duplicates). A copy counts as caught when a verbatim-type check (`verbatim`)
rejects it; a self-reference when `self_contained` does. A pair flagged `duplicate_of` a member of its own duplicate
group is a true positive (whichever member is kept); any other flag is a false positive (close-different pairs are
worded like a member of their group but ask something else); a group of k pairs expects k − 1 flags, and the flags
it lacks are false negatives. Such a correct flag on a good pair does not count against it below.

{chr(10).join(main_rows)}

Share of good pairs each check rejects (a too eager heuristic shows here; `duplicate` counts only wrong flags):

{chr(10).join(check_rows)}

{chr(10).join(any_rows)}

Failing examples (ids of `tests/fixtures/labelled/pairs.jsonl`; the script prints each with its reason):

{chr(10).join(fail_lines)}
"""
    print("\n" + text)
    if args.write:
        write_section(text)
        print("wrote the section to benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
