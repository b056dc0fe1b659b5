"""Reading a run file: JSON Lines of :class:`~goldset.schema.RunSample` that the user's system wrote, checked
against the dataset it claims to answer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldset.dataset import Dataset
from goldset.errors import InputError, RecordError
from goldset.schema import QAPair, RunSample


@dataclass
class RunFile:
    samples: dict[str, RunSample]
    notes: list[str] = field(default_factory=list)


def _sidecar_meta(path: Path) -> tuple[Path, dict[str, Any]] | None:
    """``<run>.meta.json`` or ``meta.json`` beside the run file, read loosely (only the version keys matter)."""
    for candidate in (path.with_name(path.stem + ".meta.json"), path.with_name("meta.json")):
        if candidate.is_file():
            try:
                data = json.loads(candidate.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise InputError(f"{candidate}: not valid JSON; fix it or remove it") from None
            if not isinstance(data, dict):
                raise InputError(f"{candidate}: expected a JSON object with dataset_version and/or manifest_hash")
            return candidate, data
    return None


def read_run_file(path: Path, dataset: Dataset, *, fingerprint: str | None = None) -> RunFile:
    """Read a run file (JSONL of RunSample) and check it belongs to ``dataset``.

    Errors: malformed lines (file:line), a blank retrieved context (file:line), the same pair twice, pair ids
    the dataset does not have (a few listed), a sidecar meta.json naming another dataset version or hash.
    Pairs the file lacks are *not* an error here: the caller scores them as failed samples.
    """
    from goldset.io import iter_jsonl_numbered

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: run file not found")
    samples: dict[str, RunSample] = {}
    notes: list[str] = []
    no_contexts = 0
    for lineno, sample in iter_jsonl_numbered(path, RunSample):
        for i, ctx in enumerate(sample.contexts):
            if not ctx.text.strip():
                raise RecordError(
                    str(path), lineno, f"contexts[{i}].text is empty; give the retrieved text or drop the context"
                )
        if sample.pair_id in samples:
            raise RecordError(str(path), lineno, f"pair {sample.pair_id} appears twice; keep one line per pair")
        if not sample.contexts and not sample.error:
            no_contexts += 1
        samples[sample.pair_id] = sample
    if not samples:
        raise InputError(f"{path}: the run file holds no samples; write one JSON line per question")

    known = {p.id for p in dataset.pairs}
    unknown = sorted(set(samples) - known)
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" (+{len(unknown) - 5} more)" if len(unknown) > 5 else "")
        raise InputError(
            f"{path}: {len(unknown)} pair id(s) not in dataset {dataset.path or ''}: {shown}; "
            f"was the run made against another dataset version?"
        )
    side = _sidecar_meta(path)
    if side is not None:
        meta_path, meta = side
        manifest = dataset.manifest
        want_version = manifest.version if manifest else None
        got_version = meta.get("dataset_version")
        if got_version and want_version and got_version != want_version:
            raise InputError(
                f"{meta_path}: the run was made against dataset version {got_version}, not {want_version}; "
                f"evaluate it against {got_version} or re-run your system"
            )
        got_hash = meta.get("manifest_hash")
        if got_hash and fingerprint and got_hash != fingerprint:
            raise InputError(
                f"{meta_path}: the run was made against a dataset with hash {got_hash}, not {fingerprint}; "
                f"evaluate it against that dataset or re-run your system"
            )
    if no_contexts:
        notes.append(f"{no_contexts} sample(s) in {path.name} have no retrieved contexts (nothing retrieved)")
    return RunFile(samples=samples, notes=notes)


def missing_sample(pair: QAPair, reason: str) -> RunSample:
    """A failed sample standing in for a pair the run lacks: it counts against the system, it is not dropped."""
    return RunSample(pair_id=pair.id, question=pair.question, error=reason)
