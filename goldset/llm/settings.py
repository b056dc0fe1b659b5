"""The ``llm`` section of goldset.yaml: named OpenAI-compatible endpoints, which one each role uses, prices.

How a role's settings and the environment become a connectable endpoint: :mod:`goldset.llm.endpoints`.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["generate", "judge"]
StructuredMode = Literal["auto", "json_schema", "json_object", "tool", "text"]


class ModelPrice(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: float = Field(ge=0, description="USD per million prompt tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million completion tokens.")


class EndpointSettings(BaseModel):
    """One named LLM endpoint under ``llm.endpoints.<name>``."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(None, description="Server URL; unset: OPENAI_BASE_URL, else api.openai.com.")
    model: str | None = Field(None, description="Model name; unset: GOLDSET_MODEL (GOLDSET_JUDGE_MODEL for judging).")
    api_key_env: str = Field(
        "OPENAI_API_KEY", description="NAME of the variable (environment or .env) holding the key; never the key."
    )
    concurrency: int = Field(8, ge=1, le=1024, description="Calls in flight.")
    rpm: float | None = Field(None, gt=0, description="Client-side requests per minute (unset: no limit).")
    tpm: float | None = Field(
        None, gt=0, description="Client-side tokens per minute, estimated offline then corrected by usage."
    )
    timeout_s: float = Field(60.0, gt=0, description="Seconds per request.")
    retry_budget: int = Field(20, ge=0, description="Retries for the whole run, shared by every call.")
    max_attempts: int = Field(6, ge=1, description="Attempts per call, the first one included.")
    backoff_base_s: float = Field(1.0, ge=0, description="First retry wait; doubles per attempt, with jitter.")
    backoff_max_s: float = Field(60.0, ge=0, description="Longest retry wait.")
    structured: StructuredMode = Field(
        "auto",
        description="Structured-output mode; auto falls back json_schema → json_object (with the schema) → tool "
        "(a forced function call) → text when the server refuses one, and remembers what works in the journal.",
    )
    temperature: float = Field(0.2, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int | None = Field(None, ge=1, description="Reply limit sent with each call (unset: the server's).")
    price_input_per_mtok: float | None = Field(None, ge=0, description="USD per million prompt tokens.")
    price_output_per_mtok: float | None = Field(None, ge=0, description="USD per million completion tokens.")
    embedding_model: str | None = Field(
        None, description="Model for /v1/embeddings; unset: GOLDSET_EMBEDDING_MODEL."
    )
    embedding_base_url: str | None = Field(
        None,
        description="Server for /v1/embeddings when it is not base_url's (e.g. a separate embeddings server); "
        "unset: GOLDSET_EMBEDDING_BASE_URL, else base_url.",
    )
    context_tokens: int | None = Field(
        None, ge=1,
        description="The model's context window in tokens (prompt + reply); unset: what the server says "
        "(llama.cpp /props, vLLM /v1/models), else no limit. No call asks for more than fits.",
    )


class LLMSettings(BaseModel):
    """The ``llm`` section: named endpoints, which one each role uses, and a price table by model name."""

    section: ClassVar[str] = "llm"

    model_config = ConfigDict(extra="forbid")

    endpoints: dict[str, EndpointSettings] = Field(default_factory=dict, description="Endpoints by name.")
    generate: str = Field("generate", description="The endpoint generation uses.")
    judge: str = Field("judge", description="The endpoint judging uses; missing: the generation endpoint.")
    prices: dict[str, ModelPrice] = Field(default_factory=dict, description="Prices by model name.")
