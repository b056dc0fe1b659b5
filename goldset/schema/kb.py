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

    id: str = Field(description="Stable id: a hash of doc_id, heading_path and position.")
    doc_id: str = Field(description="Path relative to the KB root, POSIX separators.")
    doc_title: str = Field("", description="The document's first heading (or its file name).")
    heading_path: list[str] = Field(
        default_factory=list,
        description="One entry per heading level: the heading's {#anchor} when it has one, else its title.",
    )
    heading_titles: list[str] = Field(default_factory=list, description="Display titles of heading_path.")
    position: int = Field(0, ge=0, description="Index of this chunk within its section.")
    text: str = Field(description="The chunk's text, markup that is not content removed.")
    content_hash: str = Field(description="sha256 of the normalised text: whitespace/case edits don't count.")
    raw_hash: str = Field(description="sha256 of the exact source span.")
    language: str = Field("en", description="Language of the chunk's prose (code left out): en, zh, ja, ko.")
    n_tokens: int = Field(ge=0, description="Tokens as goldset counts them (one per CJK character).")
    char_start: int = Field(ge=0, description="Character offset of the chunk's span in the source document.")
    char_end: int = Field(ge=0, description="Character offset where the span ends (exclusive).")
    flags: list[str] = Field(default_factory=list, description="e.g. 'oversized' for a code block > max size.")


class DocumentEntry(Record):
    """One document of a snapshot: what was read and how."""

    doc_id: str = Field(description="Path relative to the KB root, POSIX separators.")
    title: str = Field("", description="The document's first heading (or its file name).")
    raw_hash: str = Field(description="sha256 of the file's decoded text.")
    encoding: str = Field("utf-8", description="The encoding the file was read with (utf-8, gb18030…).")
    language: str = Field("en", description="Language of most of the document's prose.")
    n_chunks: int = Field(0, description="Chunks cut from it.")
    n_bytes: int = Field(0, description="File size in bytes.")


class KBSnapshot(Record):
    """One ingest of a KB: which documents, with which chunking settings, and an id that names the content.

    ``id`` is a hash of the sorted (chunk id, content hash) pairs: the same KB content gives the same id.
    """

    id: str = Field(description="'kb-' + hash of the sorted (chunk id, content hash) pairs.")
    created_at: datetime = Field(default_factory=utcnow, description="When the ingest ran (UTC).")
    root: str = Field(description="The DOCS_DIR as given (not used for identity).")
    chunking: dict[str, int | float | str | bool] = Field(
        default_factory=dict, description="The settings that decide chunk boundaries, chunker version included."
    )
    documents: list[DocumentEntry] = Field(default_factory=list, description="Every document ingested.")
    n_chunks: int = Field(0, description="Chunks in the snapshot.")
    skipped: list[str] = Field(default_factory=list, description="'path: reason' for each file left out.")
