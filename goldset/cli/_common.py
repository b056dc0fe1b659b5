"""Small helpers shared by the command modules: the console and the workspace option."""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console

    from goldset.context import Context
    from goldset.progress import Progress

WorkspaceOption = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        help="Workspace folder (default: $GOLDSET_WORKSPACE or the current one).",
        show_default=False,
    ),
]


def _width(stream: TextIO) -> int | None:
    """Rich's 80 columns truncate metric tables in CI logs and pipes; use $COLUMNS or 120 there."""
    if stream.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() else 120


@cache
def console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, width=_width(sys.stdout))


@cache
def err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True, width=_width(sys.stderr))


def context(path: Path | None, *, optional: bool = False, **options: Mapping[str, Any] | None) -> Context:
    """The command's context: the workspace around ``path`` (or the current folder; ``optional``: none is fine),
    goldset.yaml, ``.env`` and the environment read once, the command's ``options`` on top (per section), and every
    section given a value validated now (:func:`check_given`), so a bad setting anywhere is reported by any
    command before it starts."""
    from goldset.context import Context
    from goldset.workspace import find_workspace, require_workspace

    ws = find_workspace(path, required=False) if optional and path is None else require_workspace(path)
    ctx = Context.open(ws, **options)
    check_given(ctx)
    return ctx


#: Where each section's model lives (``module:Class``), so :func:`context` imports only the models of
#: the sections a run was given values for (``goldset.config.Settings`` holds the same models; a test holds them
#: equal). Validating the ``filter`` section imports every check's module.
SECTION_MODELS: dict[str, str] = {
    "kb": "goldset.kb.settings:KBSettings",
    "llm": "goldset.llm.settings:LLMSettings",
    "generate": "goldset.generation.settings:GenerateSettings",
    "filter": "goldset.filters.settings:FilterSettings",
    "review": "goldset.review.settings:ReviewSettings",
    "versioning": "goldset.versioning.settings:VersioningSettings",
    "eval": "goldset.evaluation.settings:EvalSettings",
    "queries": "goldset.queries.settings:QueriesSettings",
}


def check_given(ctx: Context) -> None:
    """Validate now every section a layer of ``ctx`` gives a value for (:meth:`Context.given`), so a bad setting
    anywhere is a ConfigError before any work starts; a section nobody set holds its defaults and is validated when
    a part asks for it. Only those sections' models are imported: ``generate`` does not import every filter check
    (the ``filter`` section's model validates each check's settings with the check's own model) to validate
    defaults."""
    import importlib

    for name, where in SECTION_MODELS.items():
        if ctx.given(name):
            module, _, attr = where.partition(":")
            ctx.section(getattr(importlib.import_module(module), attr))


class ProgressDisplay:
    """A transient rich progress display on stderr, one bar per stage, fed by :class:`goldset.progress.Progress`
    updates (``with ProgressDisplay() as show: goldset.generate(..., progress=show)``). Nothing is drawn until the
    first update, so a job that finishes at once leaves no trace; nothing at all when stderr is not a terminal (a
    pipe, a CI log: a transient display would show nothing there, and its refresh thread would cost CPU)."""

    def __init__(self, *, disable: bool = False) -> None:
        self.disable = disable
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self._width: int | None = None
        self._restore: tuple[Any, Any] | None = None
        #: The last update of each stage (what an interrupted command says was done).
        self.last: dict[str, Progress] = {}

    def __enter__(self) -> ProgressDisplay:
        return self

    def __call__(self, update: Progress) -> None:
        self.last[update.stage] = update
        if self.disable:
            return
        if self._progress is None:
            if not err_console().is_terminal:
                self.disable = True
                return
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(bar_width=BAR_WIDTH),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
                console=err_console(),
                transient=True,
            )
            self._progress.__enter__()
            self._watch_width()
        if update.stage not in self._tasks:
            self._tasks[update.stage] = self._progress.add_task(update.stage, total=update.total, info="")
        if self._width is None:  # read once, and again after the terminal was resized (SIGWINCH)
            self._width = self._progress.console.width
        fixed = len(update.stage) + BAR_WIDTH + 2 * len(str(update.total or 0)) + 1 + len("0:00:00") + 4
        info = fit_counters(update.counters, self._width - fixed)
        self._progress.update(self._tasks[update.stage], completed=update.done, total=update.total, info=info)

    def _watch_width(self) -> None:
        """Forget the terminal width when the terminal is resized, so the next update reads it again (reading it
        on every update costs ~0.3 ms); the main thread only, where signal handlers can be set."""
        import signal
        import threading

        winch = getattr(signal, "SIGWINCH", None)
        if winch is None or threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(winch)
        if previous is None:  # set from C: nothing to call, restore the default
            previous = signal.SIG_DFL

        def resized(signum: int, frame: Any) -> None:
            self._width = None
            if callable(previous):
                previous(signum, frame)

        signal.signal(winch, resized)
        self._restore = (winch, previous)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)
            self._progress = None
        if self._restore is not None:
            import signal

            signal.signal(*self._restore)
            self._restore = None


#: The progress bar's width: short, so done/total and the counters keep their room at 80 columns.
BAR_WIDTH = 20


def fit_counters(counters: Mapping[str, int | float | str], room: int) -> str:
    """The counters as ``name value`` pairs within ``room`` characters, whole: zeros go first (nothing happened),
    then the last ones (the first are the run's main figures), never cut mid-word."""
    items = [(k, v, f"{k} {_fmt(v)}") for k, v in counters.items()]

    def line(kept: list[tuple[str, int | float | str, str]]) -> str:
        return "  ".join(text for _, _, text in kept)

    while items and len(line(items)) > room:
        zeros = [i for i, (_, v, _) in enumerate(items) if i and not isinstance(v, str) and v == 0]
        items.pop(zeros[-1] if zeros else -1)
    return line(items)


def money(value: float | None, model: str | None = None) -> str:
    """A cost in dollars, or why there is none: a model without a price costs "unknown", never $0.0000."""
    if value is None:
        return f"no price for {model or 'the model'}; set llm.prices"
    return f"${value:.4f}"


def _fmt(value: int | float | str) -> str:
    if isinstance(value, bool | str):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.4g}"
