"""A workspace: the folder with a goldset.yaml, and where everything it holds lives (:class:`Workspace`), found from
a path or the current folder. Making one and saying what it holds is :mod:`goldset.scaffold`'s (`goldset init`,
`goldset status`); reading and writing its data is :mod:`goldset.data`'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from goldset.errors import WorkspaceError

CONFIG_FILE = "goldset.yaml"
STATE_DIR = ".goldset"


@dataclass(frozen=True)
class Workspace:
    """A folder with a goldset.yaml. Paths of everything a workspace holds are defined here, once."""

    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def state_dir(self) -> Path:
        """Working state that can be rebuilt (KB snapshot, LLM call journal): git-ignored."""
        return self.root / STATE_DIR

    @property
    def kb_dir(self) -> Path:
        return self.state_dir / "kb"

    @property
    def cache_path(self) -> Path:
        return self.state_dir / "calls.sqlite"

    @property
    def data_dir(self) -> Path:
        """The dataset folder (pairs.jsonl + chunks.jsonl + manifest.json), the one DVC versions."""
        return self.root / "data"

    @property
    def pairs_path(self) -> Path:
        """The candidates file: every pair, whatever its status (goldset's own modules read and write it through
        :class:`goldset.data.WorkspaceData`)."""
        from goldset.schema.manifest import PAIRS_FILE

        return self.data_dir / PAIRS_FILE

    @property
    def prompts_dir(self) -> Path:
        return self.root / "prompts"

    @property
    def labeling_dir(self) -> Path:
        return self.root / "labeling"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def env_file(self) -> Path:
        return self.root / ".env"


def find_workspace(start: Path | None = None, *, required: bool = True) -> Workspace | None:
    """The workspace containing ``start`` (default: $GOLDSET_WORKSPACE, else the current directory)."""
    if start is None:
        start = Path(os.environ.get("GOLDSET_WORKSPACE") or Path.cwd())
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILE).is_file():
            return Workspace(folder)
    if required:
        raise WorkspaceError(f"{start}: not inside a goldset workspace (no {CONFIG_FILE}); run `goldset init` first")
    return None


def require_workspace(start: Path | None = None) -> Workspace:
    """Like :func:`find_workspace`, but a missing workspace is an error that says to run `goldset init`."""
    ws = find_workspace(start, required=True)
    if ws is None:  # find_workspace raised already; this keeps type checkers informed
        raise WorkspaceError("not inside a goldset workspace; run `goldset init` first")
    return ws


#: How every library entry point takes its workspace: a :class:`Workspace`, a path inside one, or None for the
#: workspace around $GOLDSET_WORKSPACE or the current folder.
WorkspaceLike: TypeAlias = Workspace | Path | str | None


def resolve_workspace(ws: WorkspaceLike = None) -> Workspace:
    """The convention of every library entry point: a :class:`Workspace`, a path inside one, or ``None`` for the
    workspace around $GOLDSET_WORKSPACE or the current folder. Raises :class:`WorkspaceError` when there is none."""
    if isinstance(ws, Workspace):
        return ws
    return require_workspace(None if ws is None else Path(ws))


def optional_workspace(ws: WorkspaceLike = None) -> Workspace | None:
    """Like :func:`resolve_workspace`, for entry points that also work outside a workspace (``evaluate``,
    ``ingest`` with an output folder): ``None`` when the current folder is not in one. A path given explicitly
    must be in a workspace."""
    if isinstance(ws, Workspace):
        return ws
    if ws is not None:
        return require_workspace(Path(ws))
    return find_workspace(required=False)


GITIGNORE_LINES = (".goldset/", ".env", "/.dvc-remote/", "/runs/")
