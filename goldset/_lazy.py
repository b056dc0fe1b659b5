"""Lazy public names for a package: ``import goldset`` (or ``goldset.review``) imports none of the modules behind
its names until one is used, so ``goldset --help`` stays fast and a check module does not load the pipeline.

A package lists ``name -> defining module`` and installs the module-level ``__getattr__``/``__dir__`` this builds::

    _EXPORTS = {"sample": "goldset.review.sampling", ...}
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
    __all__ = sorted(_EXPORTS)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name is imported from its module on first use, then cached
    in the package's namespace (later lookups are plain attribute reads)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
