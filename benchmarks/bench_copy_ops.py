"""Benchmark: the copy check per edit operation, on the held-out set ``tests/fixtures/heldout-ops`` (or ``--set
heldout-ops2``, the second batch).

The set (its README) holds, in English and Chinese over six FastAPI pages no other fixture uses, good pairs, verbatim
copies of their evidence and light edits of it by operation: ``lead_in``, ``clause_swap``, ``synonym_swap``,
``cell_reorder`` and ``sentence_merge``. It was written before the copy check was changed, by someone who did not
read it; this script treats the check as a black box too. It judges the set the way
``bench_filter_accuracy.py`` judges its sets (same helpers: ingest into a temporary workspace, each quote placed in
its chunk, ``goldset.run_filters(ws, use_llm=False)``, every check with its defaults), one workspace per kind of
pair: the good pairs, the verbatim copies, and the light edits of each operation (a copy asks its good pair's
question, so two copies of one pair in one file would be duplicates with the same id).

``tests/fixtures/heldout-ops2`` (its README), written after this set's baseline and before the check was changed,
holds what an LLM told "do not copy" writes: ``combined`` edits (two or three operations on one quote),
``short_evidence`` (a lead-in and a synonym on a quote of one short sentence, with verbatim copies of the same quotes
as the control) and ``partial_copy`` (one clause copied, the rest paraphrased), and good pairs of the hard kind
(the source's identifiers and numbers in their own words; the good pairs no edit is made of).

Reported per language: good pairs not rejected (by any check, and by the copy check), verbatim copies and light
edits of each operation the copy check rejects, and the ids it misses. The check's reasons are not printed unless
``--reasons`` asks for them (to stdout only), so the section can be read without learning how the check works.

``tests/fixtures/heldout-ops3`` (issue #22; its README), written before the check was changed for that issue: one
operation per edit (the five above and ``partial_copy``), four per operation and language, over three other pages;
its table is a section of its own at the end of RESULTS.md.

Run: ``.venv/bin/python benchmarks/bench_copy_ops.py [--set heldout-ops|heldout-ops2|heldout-ops3] [--write]
[--note TEXT] [--reasons]`` (``--write`` replaces that set's table in the section ``## filters: copy check per edit
operation (held-out, written before the change)`` of RESULTS.md: the first set's at its top, the second batch's in
its subsection, each keeping the other's; the third batch's own section).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any

from _results import RESULTS, machine, write_section
from bench_filter_accuracy import (
    FIXTURES,
    LANGS,
    SETS,
    Share,
    goldset_commit,
    is_copy_check,
    load_labels,
    run,
)

from goldset.schema import QAPair

#: The edit operations of each set, in the order of its table.
SET_OPERATIONS = {
    "heldout-ops": ("lead_in", "clause_swap", "synonym_swap", "cell_reorder", "sentence_merge"),
    "heldout-ops2": ("combined", "short_evidence", "partial_copy"),
    "heldout-ops3": ("lead_in", "clause_swap", "synonym_swap", "cell_reorder", "sentence_merge", "partial_copy"),
}
# run() and load_labels() look a set's folder up in SETS; registered in this process only (bench_dedup_judge.py
# iterates SETS and does not know these sets' labels).
for _name in SET_OPERATIONS:
    SETS[_name] = FIXTURES / _name
SECTION = "## filters: copy check per edit operation (held-out, written before the change)"
#: The subsection of SECTION that holds the second batch's table.
SUBSECTION = "### Second batch (`heldout-ops2`): combined edits, short evidence, partial copies"
#: The third batch's own section (written for issue #22, after the others' sections; it replaces only itself).
SECTION3 = "## filters: copy check per edit operation, third held-out batch (`heldout-ops3`, issue #22)"


def copy_rejects(p: QAPair) -> bool:
    """The pair is rejected by a check that judges copying of the evidence (``verbatim``, or one named for it)."""
    return any(is_copy_check(n) and c.rejects for n, c in p.checks.items())


def judge(set_name: str, labels: list[dict[str, Any]]) -> dict[str, QAPair]:
    """Verdicts by labelled id: one run for the good pairs, one for the verbatim copies, one per operation."""
    groups = {lab: [r for r in labels if r["label"] == lab] for lab in ("good", "verbatim_copy")}
    for op in SET_OPERATIONS[set_name]:
        groups[op] = [r for r in labels if r["label"] == "light_edit" and r["operation"] == op]
    verdicts: dict[str, QAPair] = {}
    for name, records in groups.items():
        verdicts.update(run(set_name, name, records))
    unknown = {r["id"] for r in labels} - set(verdicts)
    if unknown:
        raise SystemExit(f"{set_name}: pairs in no run (label or operation unknown): {sorted(unknown)}")
    return verdicts


def figures(
    labels: list[dict[str, Any]], verdicts: dict[str, QAPair], operations: tuple[str, ...], reasons: bool
) -> dict[str, Share]:
    """One language's shares: good pairs passing (any check / copy check; ``good_hard``: the good pairs no copy or
    edit is made of), copies and each operation caught."""
    out = {k: Share() for k in ("good", "good_copy", "good_hard", "verbatim_copy", *operations, "light_edit")}
    bases = {r["variant_of"] for r in labels if r["variant_of"]}
    for r in labels:
        p = verdicts[r["id"]]
        if r["label"] == "good":
            rejecting = sorted(n for n, c in p.checks.items() if c.rejects)
            out["good"].add(not rejecting, r["id"], ", ".join(rejecting))
            out["good_copy"].add(not copy_rejects(p), r["id"])
            if r["id"] not in bases:
                out["good_hard"].add(not rejecting, r["id"])
            continue
        why = "; ".join(f"{n}: {c.reason}" for n, c in p.checks.items() if is_copy_check(n)) if reasons else ""
        out[r["label"] if r["label"] == "verbatim_copy" else r["operation"]].add(copy_rejects(p), r["id"], why)
        if r["label"] == "light_edit":
            out["light_edit"].add(copy_rejects(p), r["id"])
    return out


def merged_section(set_name: str, text: str) -> str:
    """The whole section with ``text`` as ``set_name``'s part and the other set's part kept from RESULTS.md."""
    current = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    found = re.search(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", current, re.S | re.M)
    first, _, second = (found.group(0) if found else "").partition(SUBSECTION + "\n")
    if set_name == "heldout-ops2":
        first = first.rstrip() or SECTION
        return f"{first}\n\n{text}"
    return text.rstrip() + (f"\n\n{SUBSECTION}\n{second}" if second else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=sorted(SET_OPERATIONS), default="heldout-ops", help="the held-out set to run")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of RESULTS.md")
    ap.add_argument("--note", default="", help="a sentence put at the top of the section (e.g. what code this is)")
    ap.add_argument("--reasons", action="store_true", help="print the copy check's reason for each miss (stdout)")
    args = ap.parse_args()
    set_name, operations = args.set, SET_OPERATIONS[args.set]
    labels = load_labels(set_name)
    verdicts = judge(set_name, labels)
    res = {
        lang: figures([r for r in labels if r["language"] == lang], verdicts, operations, args.reasons)
        for lang in LANGS
    }
    if args.reasons:
        for lang in LANGS:
            for key, share in res[lang].items():
                for miss in share.misses if key not in ("good", "good_copy", "good_hard", "light_edit") else []:
                    print(f"{lang} {key} missed: {miss}")

    second = set_name == "heldout-ops2"
    third = set_name == "heldout-ops3"
    copies = ": the short quotes" if second else ""

    def row(title: str, get: Callable[[dict[str, Share]], str]) -> str:
        return f"| {title} | " + " | ".join(get(res[lang]) for lang in LANGS) + " |"

    rows = [
        "| figure | en | zh |",
        "|---|---|---|",
        row("good pairs not rejected (by any check)", lambda r: r["good"].cell()),
        row("good pairs not rejected by the copy check", lambda r: r["good_copy"].cell()),
        *(
            [row("hard good pairs not rejected (by any check)", lambda r: r["good_hard"].cell())]
            if second or third
            else []
        ),
        row(f"verbatim copies rejected (copy check){copies}", lambda r: r["verbatim_copy"].cell()),
        *(row(f"light edits rejected: `{op}`", lambda r, op=op: r[op].cell()) for op in operations),
        row("light edits rejected: all operations", lambda r: r["light_edit"].cell()),
    ]
    missed = []
    for lang in LANGS:
        for key in ("verbatim_copy", *operations):
            ids = [m.split(":", 1)[0] for m in res[lang][key].misses]
            missed.append(f"- {lang} `{key}`: {', '.join(ids) or 'none'}")
        bad = [f"{m.split(':', 1)[0]} ({m.split(': ', 1)[1]})" for m in res[lang]["good"].misses]
        missed.append(f"- {lang} good pairs rejected (by which check): {', '.join(bad) or 'none'}")
    note = f"**{args.note.strip()}**\n" if args.note.strip() else ""
    text = (third_text if third else second_text if second else first_text)(note, rows, missed)
    print("\n" + text)
    if args.write:
        write_section(text if third else merged_section(set_name, text))
        print("wrote the section to benchmarks/RESULTS.md")


def first_text(note: str, rows: list[str], missed: list[str]) -> str:
    return f"""{SECTION}
Machine: {machine()}. Script: `benchmarks/bench_copy_ops.py` (`--write` updates this section).

Code measured: goldset as of commit {goldset_commit()} (the last commit that touched `goldset/`).
{note}The set (`tests/fixtures/heldout-ops/pairs.jsonl`, six FastAPI tutorial pages in English and the same in
Chinese, none used by another fixture) was written without reading the copy check's code or thresholds, before it
was changed: the check is a black box to it, and to this section (its reasons are not shown here).

Method: as in "filters: accuracy on the hand-labelled sets": the pages are ingested into a temporary workspace,
each quote placed in the chunk that holds it, and `goldset.run_filters(ws, use_llm=False)` judges the pairs with
every check at its defaults. Seven runs, one workspace each: the good pairs, the verbatim copies, and the light
edits of each operation. A copy or edit counts as caught when a copy check (`verbatim`) rejects it; a good pair
passes unless a check with severity `reject` fails. No page of the set has a Markdown table (the tutorial's only
one is in a page another fixture holds), so `cell_reorder` reorders or re-joins list items.

{chr(10).join(rows)}

Missed (ids of the set's `pairs.jsonl`; `--reasons` prints the check's reasons):

{chr(10).join(missed)}
"""


def second_text(note: str, rows: list[str], missed: list[str]) -> str:
    return f"""{SUBSECTION}
Machine: {machine()}. Script: `benchmarks/bench_copy_ops.py --set heldout-ops2` (`--write` updates this subsection).

Code measured: goldset as of commit {goldset_commit()} (the last commit that touched `goldset/`).
{note}The batch (`tests/fixtures/heldout-ops2/pairs.jsonl`, six other FastAPI tutorial pages in English and the same
in Chinese, none used by another fixture) was written after the table above and before the check was changed,
without reading the check's code or thresholds. It holds what an LLM told "do not copy" writes: `combined` (two or
three operations on one quote: a lead-in, a synonym, clauses swapped, sentences merged, list items reordered),
`short_evidence` (a lead-in and one synonym on a quote of one short sentence, 8-20 tokens in English, 12-30 in
Chinese; the verbatim copies are of the same short quotes, as the control) and `partial_copy` (one clause of at
least 8 words / 15 characters copied, carrying the answer, the rest in other words); and good pairs of the hard
kind: the source's identifiers and numbers in the writer's own words (the good pairs no edit is made of).

Method: as above, one workspace each for the good pairs, the verbatim copies and the edits of each operation.

{chr(10).join(rows)}

Missed (ids of the batch's `pairs.jsonl`; `--reasons` prints the check's reasons):

{chr(10).join(missed)}
"""


def third_text(note: str, rows: list[str], missed: list[str]) -> str:
    return f"""{SECTION3}
Machine: {machine()}. Script: `benchmarks/bench_copy_ops.py --set heldout-ops3` (`--write` updates this section).

Code measured: goldset as of commit {goldset_commit()} (the last commit that touched `goldset/`).
{note}The batch (`tests/fixtures/heldout-ops3/pairs.jsonl`, three FastAPI tutorial pages in English and the same
in Chinese that no other fixture holds: `body-multiple-params.md`, `path-operation-configuration.md`,
`simple-oauth2.md`) was written for issue #22 before the copy check was changed and before this script first ran
on it, without reading the check's code or thresholds. One operation per edit, four edits per operation and
language (one miss is 25 points): `lead_in`, `clause_swap`, `synonym_swap`, `cell_reorder` (list items or an
enumeration's items reversed: these pages have no Markdown table), `sentence_merge`, `partial_copy` (one clause of
at least 7 words / 12 characters copied); 34 good pairs per language, 10 of them hard (no edit made of them); six
verbatim copies per language as the control.

Method: as in the section "filters: copy check per edit operation": one workspace each for the good pairs, the
verbatim copies and the edits of each operation, `goldset.run_filters(ws, use_llm=False)`, every check at its
defaults.

{chr(10).join(rows)}

Missed (ids of the batch's `pairs.jsonl`; `--reasons` prints the check's reasons):

{chr(10).join(missed)}
"""


if __name__ == "__main__":
    main()
