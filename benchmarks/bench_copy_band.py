"""Benchmark: the copy judge deciding the verbatim check's borderline band (issue #22), on the held-out sets.

Each set of ``bench_copy_ops.py`` (``heldout-ops``, ``heldout-ops2``, ``heldout-ops3``) is judged twice, in the same
workspaces as there (one for the good pairs, one for the verbatim copies, one per edit operation): lexically
(``run_filters(ws, use_llm=False)``) and with the copy judge (``use_llm=True``; groundedness and the duplicate
judge off, so every chat call is the copy judge's). The judge is the FAKE of the test suite
(``tests/helpers/copy_responders.py``: a near copy when 60% or more of the answer's tokens follow one passage in
its order), served by ``tests/helpers/fake_openai.py`` in this process. It reads the prompt only, never a label.
So the judged figures say what the band and the mechanics do with *a* judge; what a real model decides there
needs a real endpoint. The band size (calls) depends only on the lexical measures and ``filter.copy_judge``.

Run: ``.venv/bin/python benchmarks/bench_copy_band.py [--write]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from _results import machine, write_section
from bench_copy_ops import SET_OPERATIONS, figures
from bench_filter_accuracy import LANGS, SETS, TAG, goldset_commit, load_labels, to_pair

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from goldset.io import read_jsonl, write_jsonl
from goldset.schema import Chunk, QAPair

SECTION = "## filters: copy judge on the borderline band (issue #22, fake judge)"
CONFIG = "\nfilter:\n  checks:\n    groundedness: false\n    duplicate: {judge: false}\n"


def run_one(set_name: str, records: list[dict[str, Any]], use_llm: bool) -> tuple[dict[str, QAPair], int]:
    """(verdicts by labelled id, band pairs asked) of one workspace."""
    from goldset import ingest, run_filters
    from goldset.scaffold import init_workspace
    from goldset.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix=f"goldset-band-{set_name}-") as tmp:
        root = Path(tmp)
        init_workspace(root, dvc=False)
        ws = Workspace(root)
        ingest(SETS[set_name] / "docs", ws)
        with ws.config_path.open("a", encoding="utf-8") as f:
            f.write(CONFIG)
        chunks = read_jsonl(ws.kb_dir / "chunks.jsonl", Chunk)
        write_jsonl(ws.pairs_path, [to_pair(r, chunks) for r in records])
        report = run_filters(ws, use_llm=use_llm)
        if report.judge_errors:
            sys.exit(f"{set_name}: judge errors {report.judge_errors[:3]}")
        out = {next(t[len(TAG) :] for t in p.tags if t.startswith(TAG)): p for p in read_jsonl(ws.pairs_path, QAPair)}
        return out, (report.copy_judge or {}).get("band", 0)


def judge_set(set_name: str, labels: list[dict[str, Any]], use_llm: bool) -> tuple[dict[str, QAPair], dict[str, int]]:
    groups = {lab: [r for r in labels if r["label"] == lab] for lab in ("good", "verbatim_copy")}
    for op in SET_OPERATIONS[set_name]:
        groups[op] = [r for r in labels if r["label"] == "light_edit" and r["operation"] == op]
    verdicts: dict[str, QAPair] = {}
    band: dict[str, int] = {}
    for name, records in groups.items():
        got, n = run_one(set_name, records, use_llm)
        verdicts.update(got)
        band[name] = n
    return verdicts, band


def main() -> None:
    from tests.helpers.copy_responders import copy_judge_responder
    from tests.helpers.fake_openai import FakeOpenAI

    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of RESULTS.md")
    ap.add_argument("--note", default="", help="a paragraph put at the end of the section (what this run found)")
    args = ap.parse_args()
    rows = ["| set · figure | en lexical | en judged | zh lexical | zh judged |", "|---|---|---|---|---|"]
    cost = ["| set | pairs | band pairs (calls) | of which good / copies / light edits |", "|---|---|---|---|"]
    with FakeOpenAI() as fake:
        fake.add_responder("copy_judge", copy_judge_responder)
        os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=fake.api_key, GOLDSET_MODEL="fake-model",
                          GOLDSET_JUDGE_MODEL="fake-judge")  # fmt: skip
        os.environ.pop("GOLDSET_EMBEDDING_MODEL", None)
        for set_name, ops in SET_OPERATIONS.items():
            SETS[set_name] = SETS.get(set_name) or (Path(__file__).resolve().parents[1] / "tests/fixtures" / set_name)
            labels = load_labels(set_name)
            calls0 = fake.calls
            lex, _ = judge_set(set_name, labels, use_llm=False)
            assert fake.calls == calls0, "a lexical run made a call"
            jud, band = judge_set(set_name, labels, use_llm=True)
            calls = fake.calls - calls0
            res = {
                (lang, mode): figures([r for r in labels if r["language"] == lang], v, ops, False)
                for lang in LANGS
                for mode, v in (("lex", lex), ("jud", jud))
            }
            for key, title in (
                ("good", "good pairs passing"),
                ("verbatim_copy", "verbatim copies rejected"),
                *((op, f"`{op}` rejected") for op in ops),
                ("light_edit", "all light edits rejected"),
            ):
                cells = [res[(lang, m)][key].cell() for lang in LANGS for m in ("lex", "jud")]
                rows.append(f"| {set_name} · {title} | " + " | ".join(cells) + " |")
            edits = sum(band[op] for op in ops)
            cost.append(f"| {set_name} | {len(labels)} | {calls} ({calls / len(labels):.0%}) | "
                        f"{band['good']} / {band['verbatim_copy']} / {edits} |")  # fmt: skip
            print(set_name, "calls", calls, band, flush=True)
    text = "\n".join(
        [
            SECTION,
            f"Machine: {machine()}. Script: `benchmarks/bench_copy_band.py` (`--write` updates this section).",
            "",
            f"Code measured: goldset as of commit {goldset_commit()}. Band: `filter.copy_judge.borderline` 0.1 (pairs",
            "whose highest verbatim measure minus its threshold lies in [-0.1, +0.1)); every check at its defaults,",
            "groundedness and the duplicate judge off. **The judge is the test suite's fake**",
            "(`tests/helpers/copy_responders.py`: a near copy when >= 60% of the answer's tokens follow one passage",
            "in its order; it reads the prompt, never a",
            "label). Lexical: `use_llm=False`, the figures of the sections above; judged: the same workspaces with the",
            "fake judge deciding the band.",
            "",
            "Cost (the band's size, one call per pair; independent of the judge):",
            "",
            *cost,
            "",
            *rows,
            "",
            "Which figure needs which: the lexical columns and the cost table need no endpoint; the judged columns are",
            "what this fake makes of the band and say nothing of a real model: with a real judge endpoint configured",
            "(`GOLDSET_JUDGE_MODEL`) the same script's judged columns are the figure to trust, and they must be",
            "re-measured before `filter.copy_judge` is relied on. Embeddings were not used: a light edit and a good",
            "paraphrase mean the same as their passage, so both sit close to it; the difference is wording, which the",
            "judge is asked about.",
            *([f"\n**{args.note.strip()}**"] if args.note.strip() else []),
        ]
    )
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
