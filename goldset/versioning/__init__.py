"""Versioning the dataset with DVC: releases, pinned loading, changelogs and refresh after document changes.

Only the settings exist so far (``versioning`` section of goldset.yaml); releases are on the roadmap.
"""
