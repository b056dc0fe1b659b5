"""Versions of the golden set with DVC: releases, pinned loading, changelogs and refresh after document changes.

- :func:`~goldset.versioning.release.release` freezes ``data/`` (pairs, the whole pinned corpus, manifest,
  changelog) as an immutable version: ``dvc add``, push, git commit and tag;
- :func:`~goldset.versioning.load.load` / :func:`~goldset.versioning.load.load_dataset` read a version back (by tag,
  or from the release commits in a clone without tags), hashes checked;
  :func:`~goldset.versioning.load.resolve_dataset_version` gives it as a local dataset folder;
- :func:`~goldset.versioning.changelog.diff_datasets` compares two versions;
- :func:`~goldset.versioning.refresh.refresh` updates the pairs after the documents changed.

Names resolve lazily (``import goldset.versioning`` imports neither dvc nor pandas).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

_EXPORTS = {
    "load_dataset": "goldset.versioning.load",
    "resolve_dataset_version": "goldset.versioning.load",
    "versions": "goldset.versioning.load",
    "diff_datasets": "goldset.versioning.changelog",
    "VersioningSettings": "goldset.versioning.settings",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # the same names, for type checkers (a test holds the two lists equal)
    from goldset.versioning.changelog import diff_datasets
    from goldset.versioning.load import load_dataset, resolve_dataset_version, versions
    from goldset.versioning.settings import VersioningSettings
