"""Integrity checks for a hand-labelled QA set (``tests/fixtures/labelled``, ``tests/fixtures/heldout``,
``tests/fixtures/heldout-ops``, ``tests/fixtures/heldout-ops2``); no tests here.

Each ``problems_*`` function returns what is wrong with a set (empty when nothing is), so a test asserts on a list
that names the records at fault. The shape is the one ``tests/fixtures/labelled/README.md`` defines; the checks are
those of ``tests/test_labelled_set.py``, parameterised by the set's folder.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from goldset.generation.validation import quote_in_text
from goldset.schema import Chunk
from goldset.text import tokenize

LANGS = ("en", "zh")
TYPES = ("factual", "reasoning", "comparison", "multi_hop", "procedural", "unanswerable")
LABELS = ("good", "verbatim_copy", "light_edit", "split_copy", "duplicate", "close_different", "self_reference")
COPIES = ("verbatim_copy", "light_edit", "split_copy")
KEYS = {"id", "language", "label", "question_type", "question", "answer", "evidence", "variant_of", "group", "note"}
#: Keys a record may carry besides KEYS: ``operation``, the edit a light edit applies (tests/fixtures/heldout-ops and
#: heldout-ops2; absent or null elsewhere).
OPTIONAL_KEYS = {"operation"}
PREFIX = {
    "good": "g",
    "verbatim_copy": "vc",
    "light_edit": "le",
    "split_copy": "sc",
    "duplicate": "dup",
    "close_different": "cd",
    "self_reference": "sr",
}

Record = dict[str, Any]


@dataclass
class LabelledSet:
    """One set: ``root/pairs.jsonl`` over the Markdown documents in ``root/docs/{en,zh}``."""

    root: Path

    @cached_property
    def records(self) -> list[Record]:
        records = []
        with (self.root / "pairs.jsonl").open(encoding="utf-8") as f:
            for n, line in enumerate(f, start=1):
                if not line.strip():
                    raise ValueError(f"{self.root / 'pairs.jsonl'}:{n}: blank line")
                records.append(json.loads(line))
        return records

    @cached_property
    def by_id(self) -> dict[str, Record]:
        return {r["id"]: r for r in self.records}

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @cached_property
    def texts(self) -> dict[str, str]:
        return {p.relative_to(self.docs).as_posix(): p.read_text(encoding="utf-8") for p in self.docs.rglob("*.md")}

    def of(self, lang: str, label: str) -> list[Record]:
        return [r for r in self.records if r["language"] == lang and r["label"] == label]


def answerable(r: Record) -> bool:
    return r["question_type"] != "unanswerable"


def problems_shape(s: LabelledSet) -> list[str]:
    """Ids unique and of the agreed form, every record with the agreed keys and values."""
    out = []
    ids = [r["id"] for r in s.records]
    out += [f"{i}: id used {c} times" for i, c in Counter(ids).items() if c > 1]
    for r in s.records:
        rid = r.get("id", "?")
        if not KEYS <= set(r) <= KEYS | OPTIONAL_KEYS:
            out.append(f"{rid}: keys differ by {sorted((set(r) - OPTIONAL_KEYS) ^ KEYS)}")
            continue
        if r["language"] not in LANGS or r["label"] not in LABELS or r["question_type"] not in TYPES:
            out.append(f"{rid}: unknown language, label or type")
            continue
        if not rid.startswith(f"{r['language']}-{PREFIX[r['label']]}-"):
            out.append(f"{rid}: id does not start with {r['language']}-{PREFIX[r['label']]}-")
        if not (r["question"].strip() and r["answer"].strip() and r["note"].strip()):
            out.append(f"{rid}: empty question, answer or note")
        for e in r["evidence"]:
            if set(e) != {"doc_id", "quote"} or not e["doc_id"].startswith(r["language"] + "/"):
                out.append(f"{rid}: bad evidence {e}")
    return out


def problems_quotes(s: LabelledSet) -> list[str]:
    """Each quote is in its document (after whitespace normalisation); unanswerable pairs quote nothing."""
    out = []
    for r in s.records:
        for e in r["evidence"]:
            if e["doc_id"] not in s.texts or not quote_in_text(e["quote"], s.texts[e["doc_id"]]):
                out.append(f"{r['id']}: quote not in {e['doc_id']}: {e['quote'][:60]!r}")
        if answerable(r) != bool(r["evidence"]):
            out.append(f"{r['id']}: {'an unanswerable pair quotes' if r['evidence'] else 'no evidence'}")
    return out


def problems_chunks(s: LabelledSet, chunks: list[Chunk]) -> list[str]:
    """Each quote lies in exactly one chunk of goldset's chunker; a good multi-hop pair spans two chunks at least."""
    out = []
    for r in s.records:
        ids: set[str] = set()
        for e in r["evidence"]:
            hits = [c.id for c in chunks if c.doc_id == e["doc_id"] and quote_in_text(e["quote"], c.text)]
            if len(hits) != 1:
                out.append(f"{r['id']}: quote in {len(hits)} chunks: {e['quote'][:60]!r}")
            ids.update(hits)
        if r["label"] == "good" and r["question_type"] == "multi_hop" and len(ids) < 2:
            out.append(f"{r['id']}: a multi-hop pair needs evidence in two chunks")
    return out


def problems_variants(s: LabelledSet) -> list[str]:
    """Copies point to a good pair of their language and type, share its question and evidence, change its answer."""
    out = []
    for r in s.records:
        rid = r["id"]
        if r["label"] in COPIES:
            base = s.by_id.get(r["variant_of"] or "")
            if base is None or base["label"] != "good":
                out.append(f"{rid}: variant_of {r['variant_of']!r} is not a good pair")
                continue
            if (base["language"], base["question_type"]) != (r["language"], r["question_type"]):
                out.append(f"{rid}: language or type differs from {base['id']}")
            if r["question"] != base["question"] or r["evidence"] != base["evidence"]:
                out.append(f"{rid}: question or evidence differs from {base['id']}")
            if r["answer"] == base["answer"] or r["group"] is not None:
                out.append(f"{rid}: same answer as {base['id']}, or in a group")
            if rid.rsplit("-", 1)[1] != base["id"].rsplit("-", 1)[1]:
                out.append(f"{rid}: number differs from {base['id']}")
        elif r["variant_of"] is not None:
            out.append(f"{rid}: only copies have variant_of")
    return out


def covered(answer: str, source: set[tuple[str, ...]], n: int = 3) -> float:
    """Share of the answer's tokens inside some word n-gram that also occurs in the source (a stitched answer's
    seams cost nothing: the tokens on each side are covered by the n-grams of their own piece)."""
    toks = tokenize(answer)
    hit = [False] * len(toks)
    for i in range(len(toks) - n + 1):
        if tuple(toks[i : i + n]) in source:
            hit[i : i + n] = [True] * n
    return sum(hit) / len(toks) if toks else 0.0


def problems_copies(s: LabelledSet) -> list[str]:
    """Verbatim and split copies are made of their documents' words (runs of three); a light edit differs from the
    copy it edits."""
    grams: dict[str, set[tuple[str, ...]]] = {}
    for doc, text in s.texts.items():
        toks = tokenize(text)
        grams[doc] = {tuple(toks[i : i + 3]) for i in range(len(toks) - 2)}
    copy_of = {r["variant_of"]: r for r in s.records if r["label"] == "verbatim_copy"}
    out = []
    for r in s.records:
        if r["label"] in ("verbatim_copy", "split_copy"):
            share = covered(r["answer"], set().union(*(grams[e["doc_id"]] for e in r["evidence"])))
            if share < 0.95:
                out.append(f"{r['id']}: only {share:.0%} of its words are copied from its documents")
        if r["label"] == "light_edit":
            vc = copy_of.get(r["variant_of"])
            if vc is None or vc["answer"] == r["answer"]:
                out.append(f"{r['id']}: no verbatim copy of {r['variant_of']} to edit, or the same text")
    return out


def problems_groups(s: LabelledSet) -> list[str]:
    """A group holds one good pair and pairs of one kind (duplicate or close_different), all of one language."""
    groups: dict[str, list[Record]] = defaultdict(list)
    out = []
    for r in s.records:
        if r["group"] is not None:
            groups[r["group"]].append(r)
        elif r["label"] in ("duplicate", "close_different"):
            out.append(f"{r['id']}: needs a group")
    for g, members in sorted(groups.items()):
        labels = Counter(m["label"] for m in members)
        kinds = set(labels) - {"good"}
        if labels["good"] != 1 or len(kinds) != 1 or not kinds <= {"duplicate", "close_different"}:
            out.append(f"{g}: {dict(labels)}")
            continue
        if len({m["language"] for m in members}) != 1:
            out.append(f"{g}: mixes languages")
        prefix = "dg" if kinds == {"duplicate"} else "cg"
        if not g.startswith(f"{members[0]['language']}-{prefix}-"):
            out.append(f"{g}: a {kinds.pop()} group is named {members[0]['language']}-{prefix}-N")
    return out


def problems_counts(s: LabelledSet, lang: str, *, good: int, per_type: int, dup_groups: int, cd_groups: int,
                    self_refs: int) -> list[str]:  # fmt: skip
    """The sizes a set promises, for one language: good pairs (and per type), a verbatim copy and a light edit of
    every answerable good pair, a split copy of every multi-evidence one, groups and self-references."""
    out = []
    goods = s.of(lang, "good")
    if len(goods) < good:
        out.append(f"{lang}: {len(goods)} good pairs, fewer than {good}")
    types = Counter(r["question_type"] for r in goods)
    out += [f"{lang}: {types[t]} good {t} pairs, fewer than {per_type}" for t in TYPES if types[t] < per_type]
    for label in ("verbatim_copy", "light_edit"):
        derived = Counter(r["variant_of"] for r in s.of(lang, label))
        if derived != Counter(r["id"] for r in goods if answerable(r)):
            out.append(f"{lang}: {label} is not one per answerable good pair")
    split = Counter(r["variant_of"] for r in s.of(lang, "split_copy"))
    if split != Counter(r["id"] for r in goods if len(r["evidence"]) > 1):
        out.append(f"{lang}: split_copy is not one per multi-evidence good pair")
    n_dup = len({r["group"] for r in s.of(lang, "duplicate")})
    n_cd = len({r["group"] for r in s.of(lang, "close_different")})
    n_sr = len(s.of(lang, "self_reference"))
    if n_dup < dup_groups:
        out.append(f"{lang}: {n_dup} duplicate groups, fewer than {dup_groups}")
    if n_cd < cd_groups:
        out.append(f"{lang}: {n_cd} close-but-different groups, fewer than {cd_groups}")
    if n_sr < self_refs:
        out.append(f"{lang}: {n_sr} self-references, fewer than {self_refs}")
    return out


# ---- the sets of edits by operation (tests/fixtures/heldout-ops, tests/fixtures/heldout-ops2) ----


def doc_grams(s: LabelledSet, doc_ids: list[str], n: int = 3) -> set[tuple[str, ...]]:
    """The word n-grams of the documents ``doc_ids`` of ``s``."""
    out: set[tuple[str, ...]] = set()
    for doc in doc_ids:
        toks = tokenize(s.texts[doc])
        out |= {tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)}
    return out


def evidence_shares(r: Record) -> tuple[float, float]:
    """(share of the answer's words found in its quotes, share of the quotes' distinct words the answer keeps)."""
    answer = tokenize(r["answer"])
    quoted = {w for e in r["evidence"] for w in tokenize(e["quote"])}
    return sum(w in quoted for w in answer) / len(answer), len(quoted & set(answer)) / len(quoted)


def problems_operations(s: LabelledSet, operations: tuple[str, ...]) -> list[str]:
    """Only good pairs, verbatim copies and light edits; a light edit names one of ``operations`` and its id is
    ``{lang}-le-{operation}-NNN``; the others have no operation."""
    wrong = []
    for r in s.records:
        op = r.get("operation")
        if r["label"] not in ("good", "verbatim_copy", "light_edit"):
            wrong.append(f"{r['id']}: label {r['label']} is not in this set")
        elif r["label"] == "light_edit":
            num = (r["variant_of"] or "").rsplit("-", 1)[-1]
            if op not in operations or r["id"] != f"{r['language']}-le-{op}-{num}":
                wrong.append(f"{r['id']}: operation {op!r}, or an id other than {{lang}}-le-{{operation}}-NNN")
        elif op is not None:
            wrong.append(f"{r['id']}: only light edits have an operation")
    return wrong


def problems_one_edit_per_operation(s: LabelledSet) -> list[str]:
    """At most one copy per good pair and operation: the benchmark judges each operation in its own workspace, where
    a pair's id comes from its question and chunks, so two edits of one pair and operation would collide."""
    per = Counter((r["variant_of"], r["label"], r.get("operation")) for r in s.records if r["variant_of"])
    return [f"{k[0]}: {n} {k[1]} records of operation {k[2]}" for k, n in per.items() if n > 1]


def problems_thin_copies(s: LabelledSet, share: float = 0.95) -> list[str]:
    """Verbatim copies are made of their documents' words (runs of three)."""
    return [
        r["id"]
        for r in s.records
        if r["label"] == "verbatim_copy"
        and covered(r["answer"], doc_grams(s, [e["doc_id"] for e in r["evidence"]])) < share
    ]


def problems_copied_good_answers(s: LabelledSet, share: float = 0.75) -> list[str]:
    """Independent of goldset's copy check: under ``share`` of a good answer's words sit in a run of three copied
    from its documents."""
    return [
        r["id"]
        for r in s.records
        if r["label"] == "good"
        and r["evidence"]
        and covered(r["answer"], doc_grams(s, [e["doc_id"] for e in r["evidence"]])) >= share
    ]


def problems_pages(s: LabelledSet, fixtures: Path, others: tuple[str, ...], pages: tuple[int, int]) -> list[str]:
    """The same pages in both languages, between ``pages[0]`` and ``pages[1]`` of them, none of them (by file name)
    in the fixture folders ``others`` or among the documents of ``filters/chunks.json``; the license and README
    beside them; every page cited."""
    names = {lang: {p.name for p in (s.docs / lang).glob("*.md")} for lang in LANGS}
    out = []
    if names["en"] != names["zh"] or not pages[0] <= len(names["en"]) <= pages[1]:
        out.append(f"pages differ between languages or are not {pages[0]}-{pages[1]}: {names}")
    used = {p.name for d in others for p in (fixtures / d).rglob("*.md")}
    chunks = json.loads((fixtures / "filters" / "chunks.json").read_text(encoding="utf-8"))
    used |= {key.split("-", 1)[1].rsplit("-", 1)[0] + ".md" for key in chunks}
    if not {"body.md", "cors.md"} <= used:  # the lists above were read
        out.append("the other fixtures' pages were not found")
    out += [f"{name} is another fixture's page" for name in sorted(names["en"] & used)]
    out += [f"{name} missing" for name in ("LICENSE-fastapi-docs.txt", "README.md") if not (s.root / name).is_file()]
    cited = {e["doc_id"] for r in s.records for e in r["evidence"]}
    if cited != {f"{lang}/{name}" for lang in LANGS for name in names[lang]}:
        out.append(f"pages cited differ from the pages: {sorted(cited)}")
    return out
