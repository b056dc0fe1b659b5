"""Knowledge-base records: chunks and the snapshot of one ingest."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from goldset.schema.base import Record, utcnow


class Chunk(Record):
    """A piece of one document, the unit QA pairs are generated from and cite.

    ``id`` is derived from ``doc_id``, ``heading_path`` and ``position`` (never from the text, never random),
    so editing one section leaves the ids of chunks in every other section unchanged, and an edited chunk
    keeps its id while its ``content_hash`` changes: that is how refresh tells "changed" from "new".
    """

    id: str
    doc_id: str = Field(description="Path relative to the KB root, POSIX separators.")
    doc_title: str = ""
    heading_path: list[str] = Field(
        default_factory=list,
        description="One entry per heading level: the heading's {#anchor} when it has one, else its title.",
    )
    heading_titles: list[str] = Field(default_factory=list, description="Display titles of heading_path.")
    position: int = Field(0, ge=0, description="Index of this chunk within its section.")
    text: str
    content_hash: str = Field(description="sha256 of the normalised text: whitespace/case edits don't count.")
    raw_hash: str = Field(description="sha256 of the exact source span.")
    language: str = "en"
    n_tokens: int = Field(ge=0)
    char_start: int = Field(ge=0, description="Character offset of the chunk's span in the source document.")
    char_end: int = Field(ge=0)
    flags: list[str] = Field(default_factory=list, description="e.g. 'oversized' for a code block > max size.")


class DocumentEntry(Record):
    doc_id: str
    title: str = ""
    raw_hash: str
    encoding: str = "utf-8"
    language: str = "en"
    n_chunks: int = 0
    n_bytes: int = 0


class KBSnapshot(Record):
    """One ingest of a KB: which documents, with which chunking settings, and an id that names the content.

    ``id`` is a hash of the sorted (chunk id, content hash) pairs: the same KB content gives the same id.
    """

    id: str
    created_at: datetime = Field(default_factory=utcnow)
    root: str = Field(description="The DOCS_DIR as given (not used for identity).")
    chunking: dict[str, int | float | str | bool] = Field(default_factory=dict)
    documents: list[DocumentEntry] = Field(default_factory=list)
    n_chunks: int = 0
    skipped: list[str] = Field(default_factory=list, description="'path: reason' for each file left out.")
