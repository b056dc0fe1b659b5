"""The one family of errors goldset raises on purpose.

Every message names the file, field or setting at fault and says what to do about it; the CLI prints the
message on one line and exits with the error's ``exit_code``: 1 when a gate failed (:class:`GateFailed`: the
numbers are real, they are just too low), 2 for bad input, configuration or usage (fix something and run again),
3 when the work itself failed (:class:`RunFailed`: every LLM call of a run failed). Nothing here may contain a
secret: messages that carry text from a server go through :func:`goldset.redaction.redact` first.
"""

from __future__ import annotations


class GoldsetError(Exception):
    """Base class: a problem the user can fix. ``str(err)`` is the one-line message shown to them."""

    exit_code: int = 2


class UsageError(GoldsetError):
    """Arguments that cannot work together as given (the CLI names its options; the library its parameters)."""


class ConfigError(GoldsetError):
    """A setting in goldset.yaml, the environment or an option is unknown or invalid."""


class WorkspaceError(GoldsetError):
    """The folder is not a goldset workspace, or lacks something a command needs (run `goldset init`)."""


class InputError(GoldsetError):
    """A file the user gave is missing, unreadable or malformed."""


class RecordError(InputError):
    """A record on disk does not match its schema. Carries the file and the 1-based line number."""

    def __init__(self, path: str, line: int | None, detail: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {detail}")
        self.path = path
        self.line = line
        self.detail = detail


class MissingExtra(GoldsetError):
    """An optional dependency the command needs is not installed; the message names the extra to install
    (e.g. ``pip install 'goldset[review]'``)."""


class EndpointError(GoldsetError):
    """No LLM endpoint is configured, or the endpoint refused us (authentication, unknown model)."""


class RunFailed(GoldsetError):
    """The work could not be done although the input was fine: every call of a run failed. ``report``: the run's
    own report when it has one (a generation's calls, failures and cost), for a caller that goes on."""

    exit_code = 3

    def __init__(self, message: str, *, report: object | None = None) -> None:
        super().__init__(message)
        self.report = report


class GateFailed(GoldsetError):
    """An evaluation fell below its thresholds; the CLI prints the failing table and exits 1."""

    exit_code = 1
