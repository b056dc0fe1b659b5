"""Workspace location and settings.

One precedence everywhere: command-line option, then environment variable, then ``goldset.yaml``, then the
default. Each module owns the pydantic model of its own section (``kb``, ``llm``, ``generate``, …) and reads it
with :func:`load_section`; this module only finds, merges and validates. Secrets never live in goldset.yaml:
they come from the environment or a git-ignored ``.env`` beside it (:func:`get_secret`).

Environment variables: ``GOLDSET_<SECTION>__<FIELD>`` (double underscore), values parsed as YAML scalars,
e.g. ``GOLDSET_KB__MAX_TOKENS=800`` or ``GOLDSET_GENERATE__PAIRS_PER_CHUNK=4``.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from goldset.errors import ConfigError
from goldset.workspace import CONFIG_FILE

if TYPE_CHECKING:
    from pydantic import BaseModel

    from goldset.workspace import Workspace

M = TypeVar("M", bound="BaseModel")


#: Top-level sections of goldset.yaml; anything else is a typo and an error.
SECTIONS = ("kb", "llm", "generate", "filter", "review", "versioning", "eval")


def load_config(ws: Workspace | None) -> dict[str, Any]:
    """The parsed goldset.yaml ({} without a workspace). Unknown top-level sections are an error."""
    if ws is None or not ws.config_path.exists():
        return {}
    import yaml

    try:
        data = yaml.safe_load(ws.config_path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{ws.config_path}{line}: not valid YAML; fix the syntax") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{ws.config_path}: expected a mapping of sections ({', '.join(SECTIONS)})")
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ConfigError(f"{ws.config_path}: unknown section {unknown[0]!r}; known sections: {', '.join(SECTIONS)}")
    return data


def env_overrides(section: str) -> dict[str, Any]:
    """``GOLDSET_<SECTION>__<FIELD>`` variables as a dict (field names lower-cased)."""
    import yaml

    prefix = f"GOLDSET_{section.upper()}__"
    out: dict[str, Any] = {}
    for name, raw in os.environ.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            try:
                value = yaml.safe_load(raw)
            except yaml.YAMLError:
                value = raw
            out[name[len(prefix) :].lower()] = value
    return out


def load_section(
    ws: Workspace | None,
    section: str,
    model: type[M],
    overrides: dict[str, Any] | None = None,
    *,
    config: dict[str, Any] | None = None,
    only: Collection[str] | None = None,
    exclude: Collection[str] = (),
) -> M:
    """Validate one section with the precedence option > environment > goldset.yaml > default.

    ``overrides`` holds command-line options; ``None`` values mean "not given" and are ignored. ``only`` and
    ``exclude`` pick the keys of a section that several models share (``eval`` holds running and scoring keys).
    """
    from pydantic import ValidationError

    if section not in SECTIONS:
        raise ValueError(f"unknown config section {section!r}")
    base = (config if config is not None else load_config(ws)).get(section) or {}
    if not isinstance(base, dict):
        where = ws.config_path if ws else CONFIG_FILE
        raise ConfigError(f"{where}: section {section!r} must be a mapping of settings")
    merged = {**base, **env_overrides(section), **{k: v for k, v in (overrides or {}).items() if v is not None}}
    if only is not None or exclude:
        merged = {k: v for k, v in merged.items() if (only is None or k in only) and k not in exclude}
    try:
        return model.model_validate(merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err.get("loc", ()))
        where = ws.config_path if ws else CONFIG_FILE
        if err.get("type") == "extra_forbidden":
            hint = "unknown setting; check its spelling"
        else:  # pydantic prefixes a validator's ValueError with "Value error, "
            hint = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        raise ConfigError(
            f"{where}: {section}.{loc}: {hint} (also settable as GOLDSET_{section.upper()}__{loc.upper()})"
        ) from None


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a .env file (comments, blank lines, optional quotes and `export ` allowed)."""
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def get_secret(name: str, ws: Workspace | None = None) -> str | None:
    """A secret from the environment, else from the workspace's git-ignored ``.env``; never from goldset.yaml."""
    value = os.environ.get(name)
    if value:
        return value
    if ws is not None:
        return read_env_file(ws.env_file).get(name) or None
    return None
