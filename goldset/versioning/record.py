"""The release record: what a release commit says about itself in git, readable without DVC.

``goldset release`` writes it into ``data.dvc`` under ``meta: {goldset: …}`` (DVC keeps a .dvc file's ``meta``
as it is), so every release commit names its version and pins its manifest's hash. Versions are found from the
tags, and also from these records in ``data.dvc``'s history, which a clone without tags still has.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from goldset.schema.base import Record

DVC_FILE = "data.dvc"


class ReleaseRecord(Record):
    """One release, as recorded in ``data.dvc``'s ``meta.goldset``."""

    version: str = Field(description="The release's name: its git tag (e.g. 'v1.2.0').")
    created_at: datetime
    message: str = ""
    previous: str | None = Field(None, description="The release this one was diffed against.")
    data_md5: str = Field(description="DVC's hash of the released folder (the .dvc file's outs md5) it was made with.")
    manifest_sha256: str = Field(description="sha256 of the released manifest.json, which hashes every other file.")
    n_pairs: int = 0
    n_golden: int = 0
    n_unreviewed: int = 0
    n_chunks: int = 0
    n_documents: int = 0
    kb_snapshot_id: str | None = None


def parse_record(dvc_file_text: str | bytes) -> ReleaseRecord | None:
    """The record of a ``data.dvc`` text, or None when it holds none (or the data changed since: a ``dvc add`` by
    hand keeps ``meta`` but changes the outs hash, and that commit is not a release)."""
    import yaml
    from pydantic import ValidationError

    try:
        data = yaml.safe_load(dvc_file_text) or {}
        meta = (data.get("meta") or {}).get("goldset")
        if not isinstance(meta, dict):
            return None
        record = ReleaseRecord.model_validate(meta)
        outs_md5 = str(data["outs"][0]["md5"])
    except (yaml.YAMLError, ValidationError, AttributeError, KeyError, IndexError, TypeError):
        return None
    return record if record.data_md5 == outs_md5 else None


def with_record(dvc_file_text: str, record: ReleaseRecord) -> str:
    """``data.dvc``'s text with ``meta.goldset`` set to ``record`` (other meta kept)."""
    import yaml

    data = yaml.safe_load(dvc_file_text) or {}
    meta: dict[str, object] = data["meta"] if isinstance(data.get("meta"), dict) else {}
    meta["goldset"] = record.model_dump(mode="json")
    data["meta"] = meta
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
