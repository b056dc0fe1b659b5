"""Knowledge-base records: chunks and the snapshot of one ingest."""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from goldset.schema.base import Record, utcnow

#: Suffixes whose pages are slides: a location reads "slide 3" there, "p. 3" elsewhere.
SLIDE_SUFFIXES = frozenset({".pptx"})


def page_label(doc_id: str, page: int | None) -> str:
    """``p. 12`` (or ``slide 3`` for a presentation) for a page of ``doc_id``; "" without a page."""
    if page is None:
        return ""
    return f"slide {page}" if PurePosixPath(doc_id).suffix.lower() in SLIDE_SUFFIXES else f"p. {page}"


def location(doc_id: str, page: int | None) -> str:
    """Where a piece of a document is, as evidence shows it: ``handbook.pdf, p. 12``, ``deck.pptx, slide 3``, or
    the document alone when it has no pages."""
    label = page_label(doc_id, page)
    return f"{doc_id}, {label}" if label else doc_id


class Chunk(Record):
    """A piece of one document, the unit QA pairs are generated from and cite.

    ``id`` is derived from ``doc_id``, ``heading_path`` and ``position`` (never from the text, never random),
    so editing one section leaves the ids of chunks in every other section unchanged, and an edited chunk
    keeps its id while its ``content_hash`` changes: that is how refresh tells "changed" from "new". A chunk of
    a PDF or a presentation is named by its ``page`` instead of its heading path (position counts within the
    page): editing one page leaves the ids of chunks on every other page unchanged.

    For PDF, Word and PowerPoint files the character offsets point into the text goldset extracts from them
    (its blocks one after the other, a blank line between two), not into the file's bytes.
    """

    id: str = Field(description="Stable id: a hash of doc_id, heading_path (or page) and position.")
    doc_id: str = Field(description="Path relative to the KB root, POSIX separators.")
    doc_title: str = Field("", description="The document's first heading (or its file name).")
    heading_path: list[str] = Field(
        default_factory=list,
        description="One entry per heading level: the heading's {#anchor} when it has one, else its title.",
    )
    heading_titles: list[str] = Field(default_factory=list, description="Display titles of heading_path.")
    position: int = Field(0, ge=0, description="Index of this chunk within its section (within its page, if paged).")
    text: str = Field(description="The chunk's text, markup that is not content removed.")
    content_hash: str = Field(description="sha256 of the normalised text: whitespace/case edits don't count.")
    raw_hash: str = Field(description="sha256 of the exact source span.")
    language: str = Field("en", description="Language of the chunk's prose (code left out): en, zh, ja, ko.")
    n_tokens: int = Field(ge=0, description="Tokens as goldset counts them (one per CJK character).")
    char_start: int = Field(ge=0, description="Character offset of the chunk's span in the source document.")
    char_end: int = Field(ge=0, description="Character offset where the span ends (exclusive).")
    flags: list[str] = Field(default_factory=list, description="e.g. 'oversized' for a code block > max size.")
    page: int | None = Field(
        None,
        ge=1,
        description="The PDF page or the slide the chunk's text is on, 1-based; None (and not written) for formats "
        "without pages.",
    )

    @model_serializer(mode="wrap")
    def _without_no_page(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Chunks of formats without pages are written as they were before pages existed: their files (and so the
        # dataset hashes runs are compared by) do not change.
        data: dict[str, Any] = handler(self)
        if data.get("page", 0) is None:
            del data["page"]
        return data

    @property
    def location(self) -> str:
        """``handbook.pdf, p. 12``, ``deck.pptx, slide 3``, or the doc_id alone (:func:`location`)."""
        return location(self.doc_id, self.page)


class DocumentEntry(Record):
    """One document of a snapshot: what was read and how."""

    doc_id: str = Field(description="Path relative to the KB root, POSIX separators.")
    title: str = Field("", description="The document's first heading (or its file name).")
    raw_hash: str = Field(description="sha256 of the file's decoded text.")
    encoding: str = Field(
        "utf-8",
        description="The encoding the file was read with (utf-8, gb18030…); for PDF, Word and PowerPoint files the "
        "format the text was extracted from (pdf, docx, pptx).",
    )
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
    skipped: list[str] = Field(
        default_factory=list,
        description="'path: reason' for each file left out, and for each part of one ('path: p. 3: reason', e.g. a "
        "scanned page without text).",
    )
