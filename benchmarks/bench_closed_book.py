"""Benchmark: precision and recall of the ``closed_book`` check against the hand-labelled set
``tests/fixtures/closed_book/labelled.jsonl`` (16 pairs, English and Chinese, labelled before the check was built:
``general`` = answerable from common knowledge, should be flagged; ``needs_docs`` = should pass).

Everything goes through goldset: the pairs become candidates in a temporary workspace (citing a fixture chunk so
the cheap checks let them through; the groundedness judge, the copy check and the duplicate judge are off) and
``goldset.run_filters`` runs against the in-process fake OpenAI server with the responders of
``tests/helpers/closed_book_responders.py``: a "model" with a fixed store of general web/programming facts and no
FastAPI knowledge, and a judge that compares key facts (numbers, content words, Chinese bigrams). Neither reads the
labels. The figures therefore measure the check's plumbing and decision rule with that fake; how often a real model
knows an answer, and how well a real judge compares answers, need a real endpoint (``OPENAI_BASE_URL``,
``GOLDSET_MODEL``, ``GOLDSET_JUDGE_MODEL`` set and ``--real``).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_closed_book.py [--real] [--write]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._results import machine, write_section  # noqa: E402

SET = ROOT / "tests" / "fixtures" / "closed_book" / "labelled.jsonl"
CFG = "filter:\n  checks:\n    groundedness: false\n    verbatim: false\n    duplicate: {judge: false}\n"


def measure() -> dict[str, dict[str, int]]:
    from goldset.filters import run_filters
    from goldset.io import read_jsonl
    from goldset.schema import QAPair
    from tests.helpers.filter_data import make_workspace, pair

    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    pairs = [pair(r["id"], r["question"], r["answer"], chunks=("zh-body-1",) if r["lang"] == "zh" else ("en-body-2",))
             for r in rows]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        ws = make_workspace(Path(tmp) / "ws", pairs, config=CFG)
        run_filters(ws)
        got = {p.id: p for p in read_jsonl(ws.pairs_path, QAPair)}
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        c = out.setdefault(r["lang"], {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "unchecked": 0})
        check = got[r["id"]].checks.get("closed_book")
        if check is None:
            c["unchecked"] += 1
            continue
        flagged, general = not check.passed, r["label"] == "general"
        c["tp" if flagged and general else "fp" if flagged else "fn" if general else "tn"] += 1
    return out


def _ratio(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.2f}" if b else "n/a"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", action="store_true", help="Use the endpoint in the environment, not the fake.")
    ap.add_argument("--write", action="store_true", help="Write the section of benchmarks/RESULTS.md.")
    args = ap.parse_args()
    if args.real:
        counts, who = measure(), f"real endpoint: {os.environ.get('GOLDSET_MODEL')} / judge "
        who += str(os.environ.get("GOLDSET_JUDGE_MODEL"))
    else:
        from tests.helpers.closed_book_responders import closed_book_answer_responder, closed_book_judge_responder
        from tests.helpers.fake_openai import FakeOpenAI

        with FakeOpenAI() as fake:
            fake.add_responder("closed_book_answer", closed_book_answer_responder)
            fake.add_responder("closed_book_agreement", closed_book_judge_responder)
            os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=fake.api_key, GOLDSET_MODEL="fake-model",
                              GOLDSET_JUDGE_MODEL="fake-judge")  # fmt: skip
            os.environ.pop("GOLDSET_EMBEDDING_MODEL", None)
            counts = measure()
            calls = fake.calls
        who = f"fake OpenAI server (tests/helpers/closed_book_responders.py), {calls} chat calls"
    lines = [
        "## filters: closed_book against a hand-labelled set (`bench_closed_book.py`, issue #19)",
        "",
        f"Machine: {machine()}. Model: {who}.",
        "Set: `tests/fixtures/closed_book/labelled.jsonl`, 16 pairs labelled before the check was built "
        "(`general` should be flagged, `needs_docs` should pass). Positive = flagged.",
        "",
        "| language | flagged & general (tp) | flagged & needs_docs (fp) | passed & general (fn) "
        "| passed & needs_docs (tn) | no verdict | precision | recall |",
        "|---|---|---|---|---|---|---|---|",
    ]
    total = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "unchecked": 0}
    for lang, c in [*sorted(counts.items()), ("all", total)]:
        if lang != "all":
            for k in total:
                total[k] += c[k]
        lines.append(f"| {lang} | {c['tp']} | {c['fp']} | {c['fn']} | {c['tn']} | {c['unchecked']} | "
                     f"{_ratio(c['tp'], c['tp'] + c['fp'])} | {_ratio(c['tp'], c['tp'] + c['fn'])} |")  # fmt: skip
    lines += [
        "",
        "With the fake these figures check the plumbing and the decision rule (no context sent, the agreement "
        "judgement read both ways), not a model: the fake's store of general facts was written by the same person "
        "as the labels, so it knows exactly the common facts the set asks (404, 500, JSON, port 443, POST, `def`) and "
        "nothing of FastAPI; on the two 422 questions it answers the general convention (400), which the judge "
        "rightly finds disagreeing. How often a real model answers the `needs_docs` questions from what it learned "
        "about FastAPI (a false flag: real models know `/docs` and 422) and how well a real judge compares answers "
        "need a real endpoint: `--real`. Not measured here yet.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
