"""What one entry point resolves once and hands down: the workspace, its settings and the environment.

:class:`Context` reads ``goldset.yaml``, the workspace's git-ignored ``.env`` and the process environment **once**
(when it is made) and keeps the raw layers. A section is validated the first time a part asks for it
(:meth:`Context.section`, with the section's own model: each package owns the model of its section) and kept.
Precedence, everywhere: an option the caller was given (the CLI's flags), then an environment variable
``GOLDSET_<SECTION>__<SETTING>`` (nested settings go deeper with ``__``:
``GOLDSET_LLM__ENDPOINTS__GEN__CONCURRENCY``; lists and mappings as JSON: ``GOLDSET_EVAL__KS=[1,5]``), then the same
variable in ``.env``, then ``goldset.yaml``, then the default. A bad value is a :class:`~goldset.errors.ConfigError`
naming where it came from: the option, the variable, the ``.env`` file or ``goldset.yaml``.

Other variables (API keys, ``OPENAI_BASE_URL``, ``GOLDSET_CACHE_DIR`` …) are read with :meth:`Context.getenv`:
the environment, then ``.env``; never goldset.yaml. Nothing below the entry points reads ``os.environ`` or a
settings file itself.

Entry points take ``ws: WorkspaceLike | Context`` and call :meth:`Context.of`: a context given is used as it is
(one read per command, however many stages it runs), anything else is resolved into a new one.
"""

from __future__ import annotations

import json
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from goldset.errors import ConfigError
from goldset.workspace import CONFIG_FILE, Workspace, WorkspaceLike, optional_workspace, resolve_workspace

if TYPE_CHECKING:
    from goldset.data import WorkspaceData

ENV_PREFIX = "GOLDSET_"
NESTED = "__"
#: The sections of goldset.yaml, in the order the reference shows them (each a package's model:
#: ``goldset.config.Settings`` puts them together, and a test holds the two lists equal).
SECTIONS: tuple[str, ...] = ("kb", "llm", "generate", "filter", "review", "versioning", "eval", "queries")


class SectionModel(Protocol):
    """A section's settings model: a pydantic model whose ``section`` names its part of goldset.yaml."""

    section: ClassVar[str]


M = TypeVar("M", bound=BaseModel)
Layer = dict[str, Any]
#: The pydantic error type of :func:`settings_conflict`.
CONFLICT = "settings_conflict"


def settings_conflict(message: str, *settings: str) -> PydanticCustomError:
    """The error a section model's validator raises when some of its settings do not fit together (``max_tokens``
    below ``target_tokens``): ``message`` names them, ``settings`` lists their names. The ConfigError then names the
    one of them given with the highest precedence (the option the user gave rather than the goldset.yaml value it
    clashes with; the first of ``settings`` when they come from one place) and where it came from."""
    return PydanticCustomError(CONFLICT, message, {"settings": ",".join(settings)})


def read_config_file(ws: Workspace | None) -> Layer:
    """The parsed goldset.yaml ({} without a workspace or file). Unknown sections are an error naming them."""
    if ws is None or not ws.config_path.exists():
        return {}
    import yaml

    try:
        # libyaml's parser when PyYAML has it (the same documents, a tenth of the pure-Python parser's time).
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(ws.config_path.read_text(encoding="utf-8"), Loader=loader) or {}
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
            raise ConfigError(f"{ws.config_path}: unknown section {section!r}; known sections: {', '.join(SECTIONS)}")
        if value is not None and not isinstance(value, dict):
            raise ConfigError(f"{ws.config_path}: section {section!r} must be a mapping of settings")
    return {k: v for k, v in data.items() if v is not None}


def read_env_file(path: Path) -> dict[str, str]:
    """The ``KEY=VALUE`` pairs of a .env file (python-dotenv's syntax: comments, quotes, ``export``)."""
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path, encoding="utf-8").items() if v is not None}


def settings_layer(variables: Mapping[str, str], where: str) -> Layer:
    """The ``GOLDSET_<SECTION>__…`` variables as nested section mappings (names lower-cased; a value that reads as a
    JSON list or mapping is decoded). ``where`` formats the error of an unknown section (``{name}``)."""
    out: Layer = {}
    for name, value in variables.items():
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX):
            continue
        path = upper[len(ENV_PREFIX) :].lower().split(NESTED.lower())
        if len(path) == 1 and path[0] not in SECTIONS:
            continue  # GOLDSET_MODEL, GOLDSET_CACHE_DIR …: variables, not settings
        if path[0] not in SECTIONS:
            raise ConfigError(
                f"{where.format(name=name)}: unknown section {path[0]!r}; known sections: {', '.join(SECTIONS)}"
            )
        node = out
        for part in path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[path[-1]] = _decoded(value)
    return out


def _decoded(value: str) -> Any:
    text = value.strip()
    if text[:1] in ("[", "{"):
        try:
            return json.loads(text)
        except ValueError:
            return value
    return value


def merge_layers(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``, mappings merged key by key (a list or a scalar replaces)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_layers(out[key], value)
        else:
            out[key] = value
    return out


@dataclass
class Context:
    """The workspace (None outside one), its settings' raw layers read once, and the variables; see the module."""

    ws: Workspace | None
    environ: Mapping[str, str]
    dotenv: Mapping[str, str]
    file: Layer
    options: Layer = field(default_factory=dict)
    _env_layer: Layer = field(default_factory=dict, repr=False)
    _dotenv_layer: Layer = field(default_factory=dict, repr=False)
    _sections: dict[str, BaseModel] = field(default_factory=dict, repr=False)

    # -- making one ------------------------------------------------------------------------------------------------
    @classmethod
    def open(cls, ws: Workspace | None, **options: Mapping[str, Any] | None) -> Context:
        """Read the layers of ``ws`` (None: the environment and defaults only) once; ``options`` as in
        :meth:`with_options`."""
        environ = dict(os.environ)
        dotenv = read_env_file(ws.env_file) if ws is not None else {}
        ctx = cls(
            ws=ws, environ=environ, dotenv=dotenv, file=read_config_file(ws),
            _env_layer=settings_layer(environ, "environment variable {name}"),
            _dotenv_layer=settings_layer(dotenv, f"{ws.env_file if ws else '.env'}: {{name}}"),
        )  # fmt: skip
        return ctx.with_options(**options) if options else ctx

    @classmethod
    def of(cls, ws: WorkspaceLike | Context = None, **options: Mapping[str, Any] | None) -> Context:
        """The context of an entry point: ``ws`` itself when it is one (with ``options`` on top), else the context of
        the workspace ``ws`` names (a :class:`Workspace`, a path inside one, or None for the one around the current
        folder; :class:`~goldset.errors.WorkspaceError` when there is none)."""
        if isinstance(ws, Context):
            return ws.with_options(**options) if options else ws
        return cls.open(resolve_workspace(ws), **options)

    @classmethod
    def optional(cls, ws: WorkspaceLike | Context = None, **options: Mapping[str, Any] | None) -> Context:
        """Like :meth:`of`, for entry points that also work outside a workspace (``ctx.ws`` is then None)."""
        if isinstance(ws, Context):
            return ws.with_options(**options) if options else ws
        return cls.open(optional_workspace(ws), **options)

    def with_options(self, **options: Mapping[str, Any] | None) -> Context:
        """This context with the caller's options on top, per section (``generate={"concurrency": 4}``; a None
        value means "not given"). The layers are not read again; sections are validated anew."""
        for section in options:
            if section not in SECTIONS:
                raise ValueError(f"with_options: unknown section {section!r}")  # a programming error
        given = {s: {k: v for k, v in (values or {}).items() if v is not None} for s, values in options.items()}
        given = {s: v for s, v in given.items() if v}
        if not given:
            return self
        return Context(
            ws=self.ws, environ=self.environ, dotenv=self.dotenv, file=self.file,
            options=merge_layers(self.options, given), _env_layer=self._env_layer, _dotenv_layer=self._dotenv_layer,
        )  # fmt: skip

    # -- what the parts ask for ------------------------------------------------------------------------------------
    @property
    def workspace(self) -> Workspace:
        """The workspace (for parts that need one: an entry point made this context with :meth:`of`)."""
        if self.ws is None:
            from goldset.errors import WorkspaceError

            raise WorkspaceError(f"not inside a goldset workspace (no {CONFIG_FILE}); run `goldset init` first")
        return self.ws

    @property
    def data(self) -> WorkspaceData:
        """The workspace's data (:class:`~goldset.data.WorkspaceData`): the candidates file, the dataset's chunks and
        manifest, the KB snapshot; the one place that reads and writes them."""
        from goldset.data import WorkspaceData

        return WorkspaceData(self.workspace)

    def section(self, model: type[M]) -> M:
        """The validated settings of ``model``'s section (``model.section``), made once per context."""
        name: str = model.section  # type: ignore[attr-defined]
        got = self._sections.get(name)
        if isinstance(got, model):
            return got
        value = self._validate(model, name)
        self._sections[name] = value
        return value

    def given(self, section: str) -> bool:
        """Whether any layer (option, environment, ``.env``, goldset.yaml) gives ``section`` a value: a null value
        counts as none, as a null section does (the template's empty ``filter: checks:``)."""
        return any(_has_value(layer.get(section)) for _, layer in self._layers(section))

    def getenv(self, name: str) -> str | None:
        """A variable from the environment, else from the workspace's ``.env``; never from goldset.yaml. Secrets
        (API keys) are read only this way."""
        return self.environ.get(name) or self.dotenv.get(name) or None

    # -- validation with the origin of a bad value -----------------------------------------------------------------
    def _layers(self, section: str) -> list[tuple[str, Layer]]:
        return [
            ("option", {section: self.options[section]} if section in self.options else {}),
            ("env", {section: self._env_layer[section]} if section in self._env_layer else {}),
            (".env", {section: self._dotenv_layer[section]} if section in self._dotenv_layer else {}),
            ("file", {section: self.file[section]} if section in self.file else {}),
        ]

    def _validate(self, model: type[M], section: str) -> M:
        layers = self._layers(section)
        merged: Layer = {}
        for _, layer in reversed(layers):
            merged = merge_layers(merged, layer)
        try:
            return model.model_validate(merged.get(section, {}))
        except ValidationError as exc:
            raise self._config_error(exc, section, model, layers) from None

    def _config_error(
        self, exc: ValidationError, section: str, model: type[BaseModel], layers: list[tuple[str, Layer]]
    ) -> ConfigError:
        """One line for the first error: where the value came from, the dotted setting, what is wrong."""
        err = exc.errors()[0]
        loc = (section, *(str(p) for p in err.get("loc", ())))
        # A conflict between settings is told where the one given with the highest precedence came from.
        places = [(*loc, name) for name in str(err.get("ctx", {}).get("settings", "")).split(",")]
        candidates = places if err.get("type") == CONFLICT else [loc]
        origin, loc = next(
            ((name, place) for name, layer in layers for place in candidates if _has_path(layer, place)),
            ("file", candidates[0]),
        )
        dotted = ".".join(loc)
        if err.get("type") == "extra_forbidden":
            problem = f"unknown setting {dotted!r}; {_known_hint(model, loc)}"
        else:  # pydantic prefixes a validator's ValueError with "Value error, "
            problem = f"{dotted}: {str(err.get('msg', 'invalid')).removeprefix('Value error, ')}"
        if origin == "option":
            return ConfigError(f"option {problem}")
        if origin == "env":
            return ConfigError(f"environment variable {_variable_name(loc, self.environ)}: {problem}")
        if origin == ".env":
            where = self.ws.env_file if self.ws else ".env"
            return ConfigError(f"{where}: {_variable_name(loc, self.dotenv)}: {problem}")
        return ConfigError(f"{self.ws.config_path if self.ws else CONFIG_FILE}: {problem}")


def workspace_of(ws: WorkspaceLike | Context = None) -> Workspace:
    """The workspace of an entry point's ``ws`` (a context's, or :func:`~goldset.workspace.resolve_workspace`'s)."""
    return ws.workspace if isinstance(ws, Context) else resolve_workspace(ws)


def _has_value(value: Any) -> bool:
    """A value other than null, or a mapping holding one somewhere below."""
    if isinstance(value, Mapping):
        return any(_has_value(v) for v in value.values())
    return value is not None


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


def _known_hint(model: type[BaseModel], loc: tuple[str, ...]) -> str:
    """What could have been meant: the settings known where the unknown one sits, and, when the name is a
    setting one level further down (``llm.timeout_s`` is a setting of each endpoint), where it belongs."""
    inner = _model_at(model, loc[1:-1])
    if inner is None:
        return "check its spelling"
    name = loc[-1]
    for path in _paths_to(inner, name):
        full = ".".join((*loc[:-1], *path, name))
        variable = (ENV_PREFIX + NESTED.join((*loc[:-1], *path, name))).upper()
        return f"{name} is a setting of {'.'.join((*loc[:-1], *path))}: {full} (or {variable})"
    return f"known here: {', '.join(inner.model_fields)}"


def _model_at(model: type[BaseModel], loc: tuple[str, ...]) -> type[BaseModel] | None:
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None:
            return None
        info = current.model_fields.get(part)
        current = _inner_model(info.annotation, through_dicts=False) if info is not None else None
    return current


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
    for field_name, info in model.model_fields.items():
        inner = _inner_model(info.annotation, through_dicts=True)
        if inner is None:
            continue
        step = (field_name,) if _inner_model(info.annotation, through_dicts=False) else (field_name, "<name>")
        if name in inner.model_fields:
            out.append(step)
    return out
