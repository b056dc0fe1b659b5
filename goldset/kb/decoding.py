"""From a file's bytes to text: size limit, binary sniffing, UTF-8 / UTF-16 / GB18030 (GBK) decoding.

Kept apart from parsing so that every way a file can be unreadable lives in one place: each one is a
:class:`SkipFile` whose message says why, which ingestion turns into a warning naming the file.
"""

from __future__ import annotations

from pathlib import Path

from goldset.kb.settings import KBSettings

_SNIFF_BYTES = 8192


class SkipFile(Exception):
    """One file cannot be ingested; ``str(exc)`` says why and what to do."""


def read_source(path: Path, settings: KBSettings) -> tuple[str, str, bytes]:
    """(text, encoding used, raw bytes) of one file, or :class:`SkipFile` with the reason.

    UTF-8 first (a BOM is dropped), then UTF-16 with a BOM, then GB18030 (a superset of GBK and GB2312,
    the encodings Chinese documents come in when they are not UTF-8).
    """
    data = read_bytes(path, settings)
    text, encoding = decode(data)
    if not text.strip():
        raise SkipFile("empty file; skipped")
    return text, encoding, data


def read_bytes(path: Path, settings: KBSettings) -> bytes:
    """The bytes of one file, or :class:`SkipFile` when it is too large (kb.max_file_bytes), unreadable or empty."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SkipFile(f"cannot read ({exc.strerror}); skipped") from None
    if size > settings.max_file_bytes:
        raise SkipFile(
            f"{size:,} bytes is over kb.max_file_bytes ({settings.max_file_bytes:,}); skipped "
            "(raise kb.max_file_bytes to include it)"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SkipFile(f"cannot read ({exc.strerror}); skipped") from None
    if not data.strip():
        raise SkipFile("empty file; skipped")
    return data


def decode(data: bytes) -> tuple[str, str]:
    """Decode document bytes, or raise :class:`SkipFile` (binary or undecodable)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise SkipFile("starts with a UTF-16 mark but does not decode as UTF-16; skipped") from None
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise SkipFile("binary file (contains NUL bytes), not text; skipped")
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        raise SkipFile("not UTF-8 or GB18030/GBK text; skipped (convert it to UTF-8)") from None
    if _looks_binary(text):
        raise SkipFile("binary file (control characters), not text; skipped")
    return text, "gb18030"


def _looks_binary(text: str) -> bool:
    sample = text[:_SNIFF_BYTES]
    controls = sum(1 for c in sample if ord(c) < 32 and c not in "\t\n\r\f")
    return controls > max(8, len(sample) // 100)
