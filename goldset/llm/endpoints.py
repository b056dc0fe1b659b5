"""Resolving a role (``generate``, ``judge``) into an :class:`Endpoint` the client can connect to.

Named endpoints live under ``llm.endpoints.<name>``; ``llm.generate`` and ``llm.judge`` say which one each role
uses. With no endpoints configured, the variables the openai SDK already reads define the default endpoint:
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``, plus ``GOLDSET_MODEL`` (generation) and ``GOLDSET_JUDGE_MODEL``
(judging; falls back to ``GOLDSET_MODEL``), and ``GOLDSET_EMBEDDING_MODEL`` for ``/v1/embeddings``.
These variables (environment, then the workspace's ``.env``) only fill what the config leaves
empty: an endpoint that names its own model keeps it.

The API key is read through :meth:`goldset.context.Context.getenv` (environment, then ``.env``) from the variable the
endpoint names in ``api_key_env``; goldset.yaml holds the *name* of the variable, never the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from goldset.context import Context
from goldset.errors import ConfigError, EndpointError
from goldset.llm.settings import EndpointSettings, LLMSettings, ModelPrice, Role
from goldset.redaction import redact

if TYPE_CHECKING:
    from goldset.workspace import WorkspaceLike

#: Sent when no key is set and the endpoint is not OpenAI's: local servers (Ollama, vLLM) ignore the key, but
#: the SDK refuses to build a client without one.
PLACEHOLDER_KEY = "sk-no-key-required"
#: Where the SDK sends requests when no base_url is set.
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
#: The model used against api.openai.com when only OPENAI_API_KEY is set.
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
HOW_TO_CONFIGURE = (
    "set OPENAI_API_KEY (OpenAI; model via GOLDSET_MODEL, default gpt-4o-mini), or OPENAI_BASE_URL of a local "
    "OpenAI-compatible server plus GOLDSET_MODEL (e.g. OPENAI_BASE_URL=http://localhost:11434/v1 "
    "GOLDSET_MODEL=qwen2.5 for Ollama), or define llm.endpoints in goldset.yaml"
)


def _strip_credentials(url: str | None) -> str | None:
    """The URL without ``user:password@`` so it can be shown and stored."""
    if not url:
        return url
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


@dataclass(frozen=True)
class Endpoint:
    """A resolved endpoint: what the client connects to. The API key is held privately and never shown."""

    name: str
    model: str
    base_url: str | None
    settings: EndpointSettings
    price: ModelPrice | None = None
    embedding_model: str | None = None
    #: Server for /v1/embeddings when it is not ``base_url`` (None: ``base_url``).
    embedding_base_url: str | None = None
    _api_key: str | None = field(default=None, repr=False, compare=False)

    @property
    def api_key_set(self) -> bool:
        """True when a key was found (environment or .env) for this endpoint."""
        return bool(self._api_key)

    def client_key(self) -> str:
        """The key to hand to the SDK: the configured one, or a placeholder for keyless local servers."""
        return self._api_key or PLACEHOLDER_KEY

    def secrets(self) -> tuple[str, ...]:
        """Strings :func:`goldset.redaction.redact` must remove from anything shown or stored."""
        return (self._api_key,) if self._api_key else ()

    @property
    def url(self) -> str:
        """The server's URL without credentials (for messages)."""
        return _strip_credentials(self.base_url) or DEFAULT_OPENAI_URL

    def redact(self, text: str) -> str:
        """``text`` (e.g. a server's error message) on one line with this endpoint's key and any other credential
        removed: safe to show, log and store."""
        return redact(" ".join(str(text).split()), self.secrets())

    def describe(self) -> dict[str, Any]:
        """Safe to log and to put in provenance: no key, no credentials in the URL."""
        return {"endpoint": self.name, "model": self.model, "base_url": _strip_credentials(self.base_url)}

    def __str__(self) -> str:
        return f"{self.name} ({self.model} at {_strip_credentials(self.base_url) or 'api.openai.com'})"


def _pick_settings(settings: LLMSettings, role: Role, where: str) -> tuple[str, EndpointSettings]:
    name = settings.generate if role == "generate" else settings.judge
    if name in settings.endpoints:
        return name, settings.endpoints[name]
    if name != role:  # the user named an endpoint explicitly: it must exist
        known = ", ".join(sorted(settings.endpoints)) or "none"
        raise ConfigError(f"{where}: llm.{role} names endpoint {name!r}, but llm.endpoints has {known}; fix the name")
    fallback = settings.generate if settings.generate in settings.endpoints else None
    if fallback is None and len(settings.endpoints) == 1:
        fallback = next(iter(settings.endpoints))
    if fallback is not None:
        if role == "judge":
            # No judge endpoint: judge with the generation endpoint (the judge model may still come from the env).
            return fallback, settings.endpoints[fallback].model_copy(update={"model": None})
        return fallback, settings.endpoints[fallback]
    return "default", EndpointSettings()


def resolve_endpoint(
    ws: WorkspaceLike | Context = None, role: Role = "generate", overrides: dict[str, Any] | None = None
) -> Endpoint:
    """The endpoint for ``role``; raises :class:`EndpointError` saying how to configure one if there is none.

    ``ws``: the entry point's :class:`~goldset.context.Context` (or a workspace, a path in one, None: the one
    around the current folder if any). ``overrides`` holds command-line options named like
    :class:`EndpointSettings` fields (``None`` = not given).
    """
    from pydantic import ValidationError

    ctx = Context.optional(ws)
    where = str(ctx.ws.config_path) if ctx.ws else "goldset.yaml"
    settings = ctx.section(LLMSettings)
    name, es = _pick_settings(settings, role, where)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if given:
        try:
            es = EndpointSettings.model_validate({**es.model_dump(exclude_unset=True), **given})
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err.get("loc", ()))
            raise ConfigError(f"option {loc}: {err.get('msg')}") from None
    base_url = es.base_url or ctx.getenv("OPENAI_BASE_URL")
    api_key = ctx.getenv(es.api_key_env)
    model = es.model
    if not model and role == "judge":
        model = ctx.getenv("GOLDSET_JUDGE_MODEL")
        if not model and name in settings.endpoints:
            model = settings.endpoints[name].model
    if not model:
        model = ctx.getenv("GOLDSET_MODEL")
    if not model and base_url is None and api_key:
        model = DEFAULT_OPENAI_MODEL
    if not model:
        if base_url is None and not api_key:
            raise EndpointError(f"no LLM endpoint configured for {role}: {HOW_TO_CONFIGURE}")
        raise EndpointError(
            f"no model configured for {role} at {_strip_credentials(base_url) or 'api.openai.com'}: set GOLDSET_MODEL"
            f"{' or GOLDSET_JUDGE_MODEL' if role == 'judge' else ''}, or llm.endpoints.{name}.model in {where}"
        )
    if base_url is None and not api_key:
        raise EndpointError(
            f"endpoint {name!r} ({role}) talks to api.openai.com but {es.api_key_env} is not set: set it in the "
            f"environment or .env, or set OPENAI_BASE_URL (or llm.endpoints.{name}.base_url) to a local server"
        )
    price: ModelPrice | None = None
    if es.price_input_per_mtok is not None and es.price_output_per_mtok is not None:
        price = ModelPrice(input_per_mtok=es.price_input_per_mtok, output_per_mtok=es.price_output_per_mtok)
    elif model in settings.prices:
        price = settings.prices[model]
    embedding_model = es.embedding_model or ctx.getenv("GOLDSET_EMBEDDING_MODEL")
    embedding_base_url = es.embedding_base_url or ctx.getenv("GOLDSET_EMBEDDING_BASE_URL")
    return Endpoint(
        name=name, model=model, base_url=base_url, settings=es, price=price, embedding_model=embedding_model,
        embedding_base_url=embedding_base_url,
        _api_key=api_key,
    )


def endpoint_configured(ws: WorkspaceLike | Context = None, role: Role = "generate") -> bool:
    """True when :func:`resolve_endpoint` would succeed (config errors still raise: they need fixing)."""
    try:
        resolve_endpoint(ws, role)
    except EndpointError:
        return False
    return True
