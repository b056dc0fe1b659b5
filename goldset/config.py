"""Settings: one model for all of goldset.yaml, layered with the environment and command-line options.

Precedence, everywhere: an option passed by the caller (the CLI's flags), then an environment variable
``GOLDSET_<SECTION>__<SETTING>`` (nested settings go deeper with ``__``: ``GOLDSET_LLM__ENDPOINTS__GEN__CONCURRENCY``;
lists and mappings as JSON: ``GOLDSET_EVAL__KS=[1,5]``), then the same variable in the workspace's git-ignored
``.env``, then ``goldset.yaml``, then the default. Each package owns the model of its own section
(``goldset/<package>/settings.py``); :class:`Settings` only puts them together.

pydantic-settings reads the environment and ``.env`` (nested delimiter, JSON values, the dotenv syntax). Its own
``settings_customise_sources`` could express the precedence too, but a validation error would then only say
*which setting* is wrong, not *where* the bad value came from; so :func:`load_settings` takes each layer from
pydantic-settings' sources and merges them itself, and an error names the variable, the ``.env`` line or the file.

Secrets (API keys) never live in goldset.yaml: :func:`get_env` reads them from the environment or ``.env``.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from goldset.errors import ConfigError
from goldset.evaluation.settings import EvalSettings
from goldset.filters.settings import FilterSettings
from goldset.generation.settings import GenerateSettings
from goldset.kb.settings import KBSettings
from goldset.llm.settings import LLMSettings
from goldset.review.settings import ReviewSettings
from goldset.versioning.settings import VersioningSettings
from goldset.workspace import CONFIG_FILE

if TYPE_CHECKING:
    from goldset.workspace import Workspace

ENV_PREFIX = "GOLDSET_"
NESTED = "__"


class Settings(BaseSettings):
    """goldset.yaml as a whole: one model per section. Build it with :func:`load_settings`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=NESTED,
        # Sections forbid unknown settings themselves; at the top, GOLDSET_MODEL and friends are not sections.
        extra="ignore",
        case_sensitive=False,
    )

    kb: KBSettings = Field(default_factory=KBSettings, description="Reading documents and cutting them into chunks.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="LLM endpoints and prices.")
    generate: GenerateSettings = Field(default_factory=GenerateSettings, description="QA generation.")
    filter: FilterSettings = Field(default_factory=FilterSettings, description="Checks and their thresholds.")
    review: ReviewSettings = Field(default_factory=ReviewSettings, description="The expert-review sample.")
    versioning: VersioningSettings = Field(default_factory=VersioningSettings, description="Releases with DVC.")
    eval: EvalSettings = Field(default_factory=EvalSettings, description="Running and scoring evaluations.")


SECTIONS: tuple[str, ...] = tuple(Settings.model_fields)


def read_config_file(ws: Workspace | None) -> dict[str, Any]:
    """The parsed goldset.yaml ({} without a workspace or file). Unknown sections are an error naming them."""
    if ws is None or not ws.config_path.exists():
        return {}
    import yaml

    try:
        data = yaml.safe_load(ws.config_path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError:
        raise ConfigError(f"{ws.config_path}: not UTF-8 text; save it as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{ws.config_path}{line}: not valid YAML; fix the syntax") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{ws.config_path}: expected a mapping of sections ({', '.join(SECTIONS)})")
    for section, value in data.items():
        if section not in SECTIONS:
            raise ConfigError(
                f"{ws.config_path}: unknown section {section!r}; known sections: {', '.join(SECTIONS)}"
            )
        if value is not None and not isinstance(value, dict):
            raise ConfigError(f"{ws.config_path}: section {section!r} must be a mapping of settings")
    return {k: v for k, v in data.items() if v is not None}


def read_env_file(path: Path) -> dict[str, str]:
    """The ``KEY=VALUE`` pairs of a .env file (python-dotenv's syntax: comments, quotes, ``export``)."""
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path, encoding="utf-8").items() if v is not None}


def get_env(name: str, ws: Workspace | None = None) -> str | None:
    """A variable from the environment, else from the workspace's git-ignored ``.env``; never from goldset.yaml.
    Secrets (API keys) are read only this way."""
    value = os.environ.get(name)
    if value:
        return value
    if ws is not None:
        return read_env_file(ws.env_file).get(name) or None
    return None


def load_settings(ws: Workspace | None = None, **options: Mapping[str, Any] | None) -> Settings:
    """All settings of ``ws`` (None: defaults and the environment only), with the usual precedence.

    ``options`` are per-section mappings of values the caller was given, e.g. ``generate={"concurrency": 4}``;
    ``None`` values mean "not given" and are skipped. Any error names its origin and is a :class:`ConfigError`.
    """
    from pydantic_settings import DotEnvSettingsSource, EnvSettingsSource

    for section in options:
        if section not in SECTIONS:
            raise ValueError(f"load_settings: unknown section {section!r}")  # a programming error, not the user's
    given = {s: {k: v for k, v in (values or {}).items() if v is not None} for s, values in options.items()}
    env_file = ws.env_file if ws is not None else None
    _check_section_names(os.environ, "environment variable {name}")
    if env_file is not None:
        _check_section_names(read_env_file(env_file), f"{env_file}: {{name}}")
    layers: list[tuple[str, dict[str, Any]]] = [
        ("option", given),
        ("env", EnvSettingsSource(Settings)()),
        (".env", DotEnvSettingsSource(Settings, env_file=env_file)() if env_file is not None else {}),
        ("file", read_config_file(ws)),
    ]
    merged: dict[str, Any] = {}
    for _, layer in reversed(layers):
        merged = merge_layers(merged, {k: v for k, v in layer.items() if k in SECTIONS})
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise _config_error(exc, layers, ws) from None


def merge_layers(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``, mappings merged key by key (a list or a scalar replaces)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_layers(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _check_section_names(variables: Mapping[str, str], where: str) -> None:
    """``GOLDSET_<X>__…`` names a section; pydantic-settings would silently ignore an unknown one."""
    for name in variables:
        upper = name.upper()
        if upper.startswith(ENV_PREFIX) and NESTED in upper:
            section = upper[len(ENV_PREFIX) :].split(NESTED, 1)[0].lower()
            if section not in SECTIONS:
                raise ConfigError(
                    f"{where.format(name=name)}: unknown section {section!r}; known sections: {', '.join(SECTIONS)}"
                )


def _config_error(exc: ValidationError, layers: list[tuple[str, dict[str, Any]]], ws: Workspace | None) -> ConfigError:
    """One line for the first error: where the value came from, the dotted setting, what is wrong."""
    err = exc.errors()[0]
    loc = tuple(str(p) for p in err.get("loc", ()))
    dotted = ".".join(loc)
    origin = next((name for name, layer in layers if _has_path(layer, loc)), "file")
    if err.get("type") == "extra_forbidden":
        problem = f"unknown setting {dotted!r}; {_known_hint(loc)}"
    else:  # pydantic prefixes a validator's ValueError with "Value error, "
        problem = f"{dotted}: {str(err.get('msg', 'invalid')).removeprefix('Value error, ')}"
    if origin == "option":
        return ConfigError(f"option {problem}")
    if origin in ("env", ".env"):
        variable = _variable_name(loc, os.environ if origin == "env" else read_env_file(ws.env_file) if ws else {})
        if origin == "env":
            return ConfigError(f"environment variable {variable}: {problem}")
        return ConfigError(f"{ws.env_file if ws else '.env'}: {variable}: {problem}")
    return ConfigError(f"{ws.config_path if ws else CONFIG_FILE}: {problem}")


def _has_path(data: Any, loc: tuple[str, ...]) -> bool:
    for part in loc:
        if not isinstance(data, dict):
            return False
        match = next((k for k in data if str(k).lower() == part.lower()), None)
        if match is None:
            return False
        data = data[match]
    return True


def _variable_name(loc: tuple[str, ...], variables: Mapping[str, str]) -> str:
    """The variable as the user spelled it (the longest ``GOLDSET_…`` name that is a prefix of the setting)."""
    for n in range(len(loc), 0, -1):
        wanted = (ENV_PREFIX + NESTED.join(loc[:n])).upper()
        for name in variables:
            if name.upper() == wanted:
                return name
    return (ENV_PREFIX + NESTED.join(loc)).upper()


def _known_hint(loc: tuple[str, ...]) -> str:
    """What could have been meant: the settings known where the unknown one sits, and, when the name is a
    setting one level further down (``llm.timeout_s`` is a setting of each endpoint), where it belongs."""
    model = _model_at(loc[:-1])
    if model is None:
        return "check its spelling"
    name = loc[-1]
    for path in _paths_to(model, name):
        full = ".".join((*loc[:-1], *path, name))
        variable = (ENV_PREFIX + NESTED.join((*loc[:-1], *path, name))).upper()
        return f"{name} is a setting of {'.'.join((*loc[:-1], *path))}: {full} (or {variable})"
    return f"known here: {', '.join(model.model_fields)}"


def _model_at(loc: tuple[str, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = Settings
    for part in loc:
        if model is None:
            return None
        field = model.model_fields.get(part)
        if field is not None:
            model = _inner_model(field.annotation, through_dicts=False)
        else:  # a key of a mapping of models (an endpoint name, a check name)
            model = None
    return model


def _inner_model(annotation: Any, *, through_dicts: bool) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if through_dicts and typing.get_origin(annotation) is dict:
        value_type = typing.get_args(annotation)[1]
        if isinstance(value_type, type) and issubclass(value_type, BaseModel):
            return value_type
    return None


def _paths_to(model: type[BaseModel], name: str) -> list[tuple[str, ...]]:
    """Paths below ``model`` (mappings of models shown as ``<name>``) whose model has a setting ``name``."""
    out: list[tuple[str, ...]] = []
    for field_name, field in model.model_fields.items():
        inner = _inner_model(field.annotation, through_dicts=True)
        if inner is None:
            continue
        step = (field_name,) if _inner_model(field.annotation, through_dicts=False) else (field_name, "<name>")
        if name in inner.model_fields:
            out.append(step)
    return out
