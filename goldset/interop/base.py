"""What every interop format is made of: its field mapping, what it loses, its writer and its reader.

A :class:`Format` states, field by field, where each goldset field goes in the other tool's format
(:class:`FieldMap`) and which fields of a :class:`~goldset.schema.QAPair` it cannot hold (:class:`Lost`). The two
lists together name every field of a pair (a test holds them to it), so an export never drops something silently:
the report of every export lists what was left behind.

Writers receive an :class:`ExportJob` (the pairs chosen, their chunks, the manifest); readers return a
:class:`ReadResult` of :class:`Row` (one pair as the file holds it: text, type, language, contexts) that
:func:`goldset.interop.fields.build_pairs` turns into pairs, the same way for every format.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from goldset.schema import Chunk, Manifest, QAPair

#: What a format's context lists hold: each evidence quote, or the whole text of each cited chunk.
ContextMode = Literal["quotes", "chunks"]
CONTEXT_MODES: tuple[str, ...] = get_args(ContextMode)


@dataclass(frozen=True)
class FieldMap:
    """One goldset field and the field of the other format that holds it (``evidence[].quote``: each item's)."""

    goldset: str
    target: str
    note: str = ""

    @property
    def pair_field(self) -> str:
        """The top-level QAPair field this mapping carries (``evidence[].quote`` -> ``evidence``)."""
        return self.goldset.split("[", 1)[0].split(".", 1)[0]


@dataclass(frozen=True)
class Lost:
    """A QAPair field the format does not carry back, and what happens to it."""

    field: str
    note: str

    def __str__(self) -> str:
        return f"{self.field} ({self.note})"


@dataclass
class ExportJob:
    """What a writer writes: the chosen pairs, the chunks they cite (a release: the whole corpus), the dataset's
    manifest, and the choices made for this export. Writers append to ``notes`` what a reader of the output must
    know (a quote not found in its chunk, a chunk missing from the dataset)."""

    pairs: list[QAPair]
    chunks: Mapping[str, Chunk]
    manifest: Manifest | None
    source: str
    selection: str
    whole_corpus: bool = False
    contexts: ContextMode = "quotes"
    license: str | None = None
    #: the workspace's labeling config (``review.label_studio.config_file``), None outside a workspace
    label_config: Path | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Context:
    """A context read from a file, to become evidence: its text and, when the file says, its chunk and document,
    or the whole text of the chunk it was shown in (a Label Studio task shows chunks, not their ids)."""

    text: str
    chunk_id: str | None = None
    doc_id: str | None = None
    chunk_text: str | None = None


@dataclass
class Row:
    """One pair as a file holds it, before it is checked and becomes a QAPair. ``where`` names it in messages
    (``file: row 3``); fields the format does not carry stay None."""

    where: str
    question: object
    answer: object
    question_type: str | None = None
    language: str | None = None
    id: str | None = None
    contexts: list[Context] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)


@dataclass
class ReadResult:
    """What a reader found: the rows, the chunks the file itself carries (a Hugging Face folder's corpus), notes."""

    rows: list[Row]
    chunks: dict[str, Chunk] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


Writer = Callable[[ExportJob, Path], list[Path]]
Reader = Callable[[Path], ReadResult]


@dataclass(frozen=True)
class Format:
    """An interop format: its name, the file (or folder) it writes by default, its field mapping and losses, and
    its writer and reader."""

    name: str
    summary: str
    default_out: str
    fields: tuple[FieldMap, ...]
    lost: tuple[Lost, ...]
    write: Writer
    read: Reader
    folder: bool = False
    #: contexts="chunks" is offered (the format has a list of reference contexts)
    has_contexts: bool = False
    #: the reference contexts an export writes when none are asked for (RAGAS: chunks, which its metrics compare)
    default_contexts: ContextMode = "quotes"

    @property
    def carried(self) -> frozenset[str]:
        """The QAPair fields an export then import gives back."""
        return frozenset(f.pair_field for f in self.fields)

    def losses(self, contexts: ContextMode = "quotes") -> list[str]:
        """What this format leaves behind, one line per field (with contexts='chunks', the quote spans too)."""
        out = [str(lost) for lost in self.lost]
        if contexts == "chunks" and self.has_contexts:
            out.insert(0, "evidence[].quote (the whole text of each cited chunk is written instead of its quotes; "
                          "an import cites the whole chunk)")  # fmt: skip
        return out

    def mapping_lines(self) -> list[str]:
        """``target ← goldset field (note)`` for each mapped field."""
        return [f"{f.target} ← {f.goldset}" + (f" ({f.note})" if f.note else "") for f in self.fields]
