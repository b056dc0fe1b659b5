"""What makes filtering incremental: hashes of a check's settings and of what it read, and verdict reuse.

A verdict is reused when its ``settings_hash`` (the check's version and thresholds) and ``input_hash`` (the pair
fields the check reads, plus its evidence chunks' content when it reads them) both match: an unchanged re-run
computes nothing and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from goldset.filters.base import CheckSettings, CheckSpec
from goldset.hashing import hash_obj, short_hash
from goldset.schema import CheckResult, Chunk, QAPair

#: What a check may list in ``CheckSpec.reads`` (``chunks`` is implied by ``uses_chunks``).
FIELDS = frozenset({"question", "answer", "question_type", "evidence", "chunks", "cited_chunks"})


def settings_hash(spec: CheckSpec[Any], settings: CheckSettings, extra: Mapping[str, Any] | None = None) -> str:
    """Hash of the check's version and thresholds and of ``extra`` (e.g. the judge model). ``enabled`` and
    ``severity`` are left out: they change what is done with a verdict, not the verdict."""
    return hash_obj({"v": spec.version, "s": settings.model_dump(exclude={"enabled", "severity"}), **(extra or {})})


def field_hashes(
    pair: QAPair,
    chunks: Mapping[str, Chunk],
    needed: Collection[str] | None = None,
    memo: dict[tuple[str, ...], tuple[str, str]] | None = None,
) -> dict[str, str]:
    """One hash per pair field a check may read, computed once per pair (``needed``: only these); each check's
    input hash combines the ones it reads. ``chunks``: the evidence chunks' content; ``cited_chunks``: also
    whether each is in the KB and its document (what the evidence check reads). ``memo``: the two chunk hashes
    by cited chunk ids, for many pairs over the same ``chunks`` (pairs share chunks: one run's dict)."""
    out: dict[str, str] = {}
    want = FIELDS if needed is None else needed
    if "question" in want:
        out["question"] = short_hash(pair.question)
    if "answer" in want:
        out["answer"] = short_hash(pair.answer)
    if "question_type" in want:
        out["question_type"] = pair.question_type.value
    if "evidence" in want:
        # canonical JSON of each Evidence's model_dump(), which for its plain str fields is its __dict__
        out["evidence"] = hash_obj([e.__dict__ for e in pair.evidence])
    if "chunks" in want or "cited_chunks" in want:
        ids = tuple(pair.chunk_ids)
        got = memo.get(ids) if memo is not None else None
        if got is None:
            got = _chunk_hashes(ids, chunks)
            if memo is not None:
                memo[ids] = got
        if "chunks" in want:
            out["chunks"] = got[0]
        if "cited_chunks" in want:
            out["cited_chunks"] = got[1]
    return out


def _chunk_hashes(ids: tuple[str, ...], chunks: Mapping[str, Chunk]) -> tuple[str, str]:
    """The ``chunks`` and ``cited_chunks`` field hashes of evidence citing chunks ``ids`` (sorted)."""
    cited = [(cid, chunks.get(cid)) for cid in ids]
    content = hash_obj([(cid, c.content_hash if c is not None else None) for cid, c in cited])
    # ids, content and documents; a plain join hashes ~5x faster than canonical JSON
    parts = (f"{cid}\x1e{c.content_hash}\x1e{c.doc_id}" if c else cid for cid, c in cited)
    return content, short_hash("\x1f".join(parts))


def fields_read(spec: CheckSpec[Any]) -> set[str]:
    """The :func:`field_hashes` keys a check's input hash is made of."""
    return {*spec.reads, *(("chunks",) if spec.uses_chunks else ())}


def input_hash(
    spec: CheckSpec[Any],
    pair: QAPair,
    chunks: Mapping[str, Chunk],
    extra: Mapping[str, Any] | None = None,
    fields: Mapping[str, str] | None = None,
) -> str:
    """Hash of what ``spec`` reads of ``pair`` (``fields``: :func:`field_hashes` already computed) and ``extra``."""
    fields = fields if fields is not None else field_hashes(pair, chunks, fields_read(spec))
    return input_hasher(spec, extra)(fields)


def input_hasher(spec: CheckSpec[Any], extra: Mapping[str, Any] | None = None) -> Callable[[Mapping[str, str]], str]:
    """:func:`input_hash` of ``spec`` and ``extra`` as a function of a pair's field hashes: the names it reads and
    the text of ``extra`` put together once, for many pairs."""
    names = [*spec.reads, *(("chunks",) if spec.uses_chunks else ())]
    tail = [f"{k}={v}" for k, v in sorted((extra or {}).items())]

    def of(fields: Mapping[str, str]) -> str:
        return short_hash("\x1f".join([*[f"{name}={fields[name]}" for name in names], *tail]))

    return of


def kb_hash(chunks: Mapping[str, Chunk]) -> str:
    """Hash of the whole KB (ids and contents), for checks that read more than a pair's own evidence."""
    return hash_obj(sorted((c.id, c.content_hash) for c in chunks.values()))


def current(pair: QAPair, name: str, s_hash: str, i_hash: str) -> CheckResult | None:
    """The pair's verdict of check ``name`` if it was made with these settings on this input, else None."""
    old = pair.checks.get(name)
    if old is not None and old.settings_hash == s_hash and old.input_hash == i_hash:
        return old
    return None


def same_verdict(a: CheckResult | None, b: CheckResult) -> bool:
    """Whether two verdicts say the same (pass/fail, score, reason, duplicate_of): then the old one is kept."""
    if a is None:
        return False
    return (a.passed, a.score, a.reason, a.duplicate_of) == (b.passed, b.score, b.reason, b.duplicate_of)


def with_check(pair: QAPair, name: str, res: CheckResult) -> QAPair:
    """A copy of ``pair`` with the verdict of ``name`` set to ``res``."""
    return pair.model_copy(update={"checks": {**pair.checks, name: res}})
