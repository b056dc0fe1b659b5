"""A dataset in memory: its pairs, the chunks they cite, its manifest; what a golden pair is; a pair as a table row.

Every command works on this one shape: generation writes the workspace's ``data/`` folder, releases version that
folder with DVC, and evaluation reads any such folder (or a released version of it). Reading and writing the folders
is :mod:`goldset.data`'s (:func:`goldset.data.read_dataset`, :func:`goldset.data.write_dataset`); this module holds
the records' rules only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from goldset.schema import Chunk, Manifest, PairStatus, QAPair

#: Which pairs form the golden set when a release chooses them (``versioning.golden``): the accepted ones, or
#: the accepted and the passed ones (a working copy's golden set is always the latter).
GoldenRule = Literal["accepted", "accepted+passed"]


@dataclass
class Dataset:
    """A dataset folder read into memory: its pairs, the chunks they cite by id, its manifest and where it lives."""

    pairs: list[QAPair]
    chunks: dict[str, Chunk] = field(default_factory=dict)
    manifest: Manifest | None = None
    path: Path | None = None
    #: ``chunks`` is the whole corpus the pairs were written against (a release's ``corpus/``), not only the
    #: chunks they cite: a retriever searching it faces the real knowledge base.
    whole_corpus: bool = False

    def golden_ids(self) -> set[str]:
        """The golden set: :func:`golden_ids` of the pairs and the manifest."""
        return golden_ids(self.pairs, self.manifest)

    def pair(self, pair_id: str) -> QAPair:
        """The pair with this id; KeyError when there is none."""
        for p in self.pairs:
            if p.id == pair_id:
                return p
        raise KeyError(pair_id)


def golden_ids(
    pairs: Iterable[QAPair], manifest: Manifest | None = None, *, rule: GoldenRule = "accepted+passed"
) -> set[str]:
    """The golden set, the one definition: a release's list (``manifest.golden_ids``) when the manifest has one,
    else the pairs ``rule`` keeps: the accepted ones, and the passed ones too unless the rule is ``accepted``. A
    working copy's golden set is its passed and accepted pairs; a release chooses with ``versioning.golden``.
    Release, ``goldset.load``, evaluation, exports, changelogs and the review estimate's coverage all use it."""
    if manifest is not None and manifest.golden_ids:
        return set(manifest.golden_ids)
    kept = {PairStatus.accepted} if rule == "accepted" else {PairStatus.accepted, PairStatus.passed}
    return {p.id for p in pairs if p.status in kept}


def was_reviewed(pair: QAPair, unreviewed: Collection[str] = ()) -> bool:
    """An expert decided on the pair (``unreviewed``: a release's golden pairs nobody reviewed)."""
    if pair.id in unreviewed:
        return False
    return pair.status is PairStatus.accepted or bool(pair.review.decisions)


#: The columns of a pair as a table row (:func:`pair_row`): ``goldset.load``'s DataFrame and the exports.
PAIR_COLUMNS = (
    "id", "question", "answer", "question_type", "language", "status", "golden", "reviewed", "evidence",
    "chunk_ids", "doc_ids", "tags", "version",
)  # fmt: skip


def pair_row(
    pair: QAPair, manifest: Manifest | None, golden: Collection[str], unreviewed: Collection[str]
) -> dict[str, Any]:
    """A pair as a table row with the :data:`PAIR_COLUMNS`."""
    return {
        "id": pair.id,
        "question": pair.question,
        "answer": pair.answer,
        "question_type": pair.question_type.value,
        "language": pair.language,
        "status": pair.status.value,
        "golden": pair.id in golden,
        "reviewed": was_reviewed(pair, unreviewed),
        "evidence": [e.model_dump(mode="json") for e in pair.evidence],
        "chunk_ids": pair.chunk_ids,
        "doc_ids": pair.doc_ids,
        "tags": list(pair.tags),
        "version": manifest.version if manifest is not None else None,
    }


def build_manifest(
    pairs: Iterable[QAPair],
    chunks: Iterable[Chunk],
    *,
    files: dict[str, str],
    version: str | None = None,
    kb_snapshot_id: str | None = None,
    base: Manifest | None = None,
) -> Manifest:
    """Counts and hashes derived from the records; fields a later stage owns (review, the judge calibration) carry
    over from base."""
    from goldset import __version__

    pairs = list(pairs)
    prompt_hashes = {
        p.provenance.prompt_id: p.provenance.prompt_hash
        for p in pairs
        if p.provenance.prompt_id and p.provenance.prompt_hash
    }
    return Manifest(
        version=version,
        goldset_version=__version__,
        kb_snapshot_id=kb_snapshot_id or (base.kb_snapshot_id if base else None),
        n_pairs=len(pairs),
        n_chunks=len(list(chunks)),
        counts_by_status=dict(sorted(Counter(p.status.value for p in pairs).items())),
        counts_by_type=dict(sorted(Counter(p.question_type.value for p in pairs).items())),
        counts_by_language=dict(sorted(Counter(p.language for p in pairs).items())),
        prompt_hashes=dict(sorted(prompt_hashes.items())),
        review=base.review if base else None,
        calibration=base.calibration if base else None,
        files=files,
    )


def same_model_notes(judge_model: str, pairs: Sequence[QAPair], system_models: Iterable[str] = ()) -> list[str]:
    """Warnings when a judge's model also wrote the pairs (``provenance.model``) or is the system's model: a model
    judging its own text favours it (self-preference), so its verdicts flatter. Every judge says them: the
    evaluation judge (``goldset eval``), the groundedness and duplicate judges (``goldset filter``), and the judge
    calibration (``goldset judge calibrate``)."""
    notes = []
    wrote = sum(1 for p in pairs if p.provenance.model == judge_model)
    if wrote:
        notes.append(
            f"the judge model {judge_model} also generated {wrote} of the {len(pairs)} pairs "
            "(provenance.model): a model judging its own pairs favours them; judge with another model (llm.judge)"
        )
    if judge_model in set(system_models):
        notes.append(
            f"the judge model {judge_model} is also the model of the system under test: a model judging "
            "its own answers favours them; judge with another model (llm.judge)"
        )
    return notes
