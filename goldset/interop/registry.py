"""The interop formats by name: ``ragas``, ``deepeval``, ``hf``, ``labelstudio``, ``csv``."""

from __future__ import annotations

from goldset.errors import UsageError
from goldset.interop import csv, deepeval, hf, labelstudio, ragas
from goldset.interop.base import Format

FORMATS: dict[str, Format] = {m.FORMAT.name: m.FORMAT for m in (ragas, deepeval, hf, labelstudio, csv)}


def get_format(name: str) -> Format:
    """The format called ``name``; a :class:`UsageError` listing the formats otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise UsageError(f"format {name!r}: expected one of {', '.join(FORMATS)}") from None
