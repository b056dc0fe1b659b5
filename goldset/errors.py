"""The one family of errors goldset raises on purpose.

Every message names the file, field or setting at fault and says what to do about it; the CLI prints the
message on one line and exits with the error's ``exit_code``. Nothing here may contain a secret: messages that
carry text from a server go through :func:`goldset.redaction.redact` first.
"""

from __future__ import annotations


class GoldsetError(Exception):
    """Base class: a problem the user can fix. ``str(err)`` is the one-line message shown to them."""

    exit_code: int = 1


class UsageError(GoldsetError):
    """A command-line option or argument that cannot work as given."""

    exit_code = 2


class ConfigError(GoldsetError):
    """A setting in goldset.yaml, the environment or an option is unknown or invalid."""

    exit_code = 2


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


class EndpointError(GoldsetError):
    """No LLM endpoint is configured, or the endpoint refused us (authentication, unknown model)."""


class GateFailed(GoldsetError):
    """An evaluation fell below its thresholds; the CLI prints the failing table and exits 1."""
