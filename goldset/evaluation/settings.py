"""Settings of the ``eval`` section of goldset.yaml: how relevance is decided, which cut-offs, how the overall
score is weighted.

Kept apart from the scoring code so reading the settings imports nothing heavy. Every default here is
documented in ``goldset/_templates/goldset.yaml`` (the file ``goldset init`` writes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldset.evaluation.judge.settings import JudgeSettings

#: Refusal patterns (Python regular expressions), searched in the *normalised* answer (NFKC, case-folded,
#: whitespace collapsed), so full-width punctuation and capitals need no special cases.
DEFAULT_REFUSAL_PATTERNS: list[str] = [
    # English
    r"\b(?:i|we) (?:do not|don['’]?t|cannot|can['’]?t|could not|couldn['’]?t|am unable to|are unable to) "
    r"(?:know|find|answer|say|determine|tell|provide)",
    r"\bi (?:do not|don['’]?t) have (?:enough |any |the )?(?:information|data|details|context)",
    r"\b(?:unable|not able) to (?:answer|find|determine|provide)",
    r"\bcannot be (?:answered|determined|found)\b",
    r"\b(?:no|not enough|insufficient) (?:relevant |specific |sufficient )?(?:information|context|details?) "
    r"(?:is |was )?(?:available|provided|given|about|on|regarding|in|to)\b",
    r"\bnot (?:mentioned|provided|specified|covered|stated|described|found|given|included|addressed) "
    r"(?:anywhere )?in (?:the |any of the )?(?:provided |given |available )?"
    r"(?:context|contexts|documents?|documentation|sources?|knowledge base|passages?|texts?)",
    r"\b(?:the )?(?:provided |given )?(?:context|contexts|documents?|documentation|sources?|knowledge base|passages?) "
    r"(?:does|do|did) not (?:contain|mention|say|provide|include|specify|cover|describe|address|answer)",
    # Chinese
    r"无法(?:回答|确定|找到|得知|判断|提供|给出)",
    r"我(?:不知道|不清楚|不确定)",
    r"(?:没有|缺乏|缺少|并无|无)(?:提供|提到|提及|涉及|找到)?(?:任何)?(?:相关|足够|具体|明确)的?(?:信息|资料|内容|说明)",
    r"(?:文档|资料|上下文|知识库|文中|原文|材料|内容)(?:中|里|内)?(?:没有|未|并未|并没有|未曾)"
    r"(?:提及|提到|说明|涉及|包含|给出|描述|记载|介绍)",
]

#: Default weights of the overall score, covering every dimension: retrieval (recall@5 .20, mrr .10), answer
#: quality (faithfulness .25, completeness .20, conciseness .10) and a hallucination penalty (.15, counted as
#: 1 - rate). Source: the seed weights of goldset issue 12, the weighting the RAG-evaluation articles it was written
#: from recommend by default (retrieval about a third, grounded and complete answers most of the rest). Judge metrics
#: (faithfulness, completeness, hallucination) count only in runs the LLM judge scored; without it they are left out
#: (``RunSummary.left_out``) and the remaining weights are renormalised.
DEFAULT_WEIGHTS: dict[str, float] = {
    "recall@5": 0.20,
    "mrr": 0.10,
    "faithfulness": 0.25,
    "completeness": 0.20,
    "conciseness": 0.10,
    "hallucination": 0.15,
}

#: Scenario presets of the overall score (``eval.weights: {preset: NAME}``; other keys beside ``preset`` override
#: single weights). Which dimensions each scenario stresses follows the same articles; the numbers are goldset's,
#: each preset moving weight from the default towards its stress and still summing to 1:
#:
#: - ``internal_kb`` (an internal knowledge base: answers must rest on the documents and leave nothing out):
#:   faithfulness and completeness;
#: - ``support_faq`` (customer support: a made-up answer costs more than a short one): faithfulness and a heavy
#:   hallucination penalty;
#: - ``tech_docs`` (technical documentation: finding the right page, and the whole procedure): recall@5 and
#:   completeness.
WEIGHT_PRESETS: dict[str, dict[str, float]] = {
    "default": dict(DEFAULT_WEIGHTS),
    "internal_kb": {
        "recall@5": 0.15,
        "mrr": 0.05,
        "faithfulness": 0.30,
        "completeness": 0.30,
        "conciseness": 0.05,
        "hallucination": 0.15,
    },
    "support_faq": {
        "recall@5": 0.15,
        "mrr": 0.10,
        "faithfulness": 0.30,
        "completeness": 0.10,
        "conciseness": 0.10,
        "hallucination": 0.25,
    },
    "tech_docs": {
        "recall@5": 0.30,
        "mrr": 0.10,
        "faithfulness": 0.15,
        "completeness": 0.30,
        "conciseness": 0.05,
        "hallucination": 0.10,
    },
}


def resolve_weights(value: Any) -> Any:
    """``{preset: NAME, metric: w, ...}`` → the preset's weights with the other keys laid over them; anything else
    is returned as given (validated as a plain ``{metric: weight}`` map)."""
    if not isinstance(value, Mapping) or "preset" not in value:
        return value
    name = value["preset"]
    if not isinstance(name, str) or name not in WEIGHT_PRESETS:
        raise ValueError(f"unknown weights preset {name!r}; known: {', '.join(WEIGHT_PRESETS)}")
    return {**WEIGHT_PRESETS[name], **{k: v for k, v in value.items() if k != "preset"}}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConcisenessSettings(_Section):
    """An answer is fully concise up to ``max_ratio`` × the reference's tokens + ``slack_tokens``; beyond that
    budget its score falls as budget / length (twice the budget scores 0.5)."""

    max_ratio: float = Field(2.0, gt=0, description="Budget: this many times the reference answer's tokens…")
    slack_tokens: int = Field(10, ge=0, description="…plus this many tokens.")


class PriceSettings(_Section):
    """USD per million tokens, used for samples whose run did not report ``cost_usd`` itself."""

    input_per_mtok: float | None = Field(None, ge=0, description="USD per million input tokens.")
    output_per_mtok: float | None = Field(None, ge=0, description="USD per million output tokens.")


class SystemEndpointSettings(_Section):
    """``eval.endpoint`` in goldset.yaml: how to talk to a RAG service over HTTP.

    Field names are dotted paths into the JSON (``data.answer``). Contexts may be strings or objects; for
    objects, ``context_text_field`` etc. name their fields. The API key comes from the secret named by
    ``api_key_env`` (environment or .env), sent as ``Authorization: Bearer …``, and is never written anywhere.
    """

    request_field: str = Field("question", description="Field of the request body holding the question.")
    pair_id_field: str | None = Field(None, description="Also send the pair id under this field.")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="Fixed fields added to every request.")
    headers: dict[str, str] = Field(default_factory=dict, description="Fixed headers (no secrets: use api_key_env).")
    api_key_env: str | None = Field(
        None, description="NAME of the variable (environment or .env) sent as 'Authorization: Bearer'."
    )
    answer_field: str = Field("answer", description="Dotted path of the answer in the reply, e.g. data.answer.")
    contexts_field: str = Field("contexts", description="Path of the contexts: a list of strings or objects.")
    context_text_field: str = Field("text", description="Field of a context object holding its text.")
    context_doc_id_field: str = Field("doc_id", description="…its document id.")
    context_chunk_id_field: str = Field("chunk_id", description="…its chunk id.")
    context_score_field: str = Field("score", description="…its retrieval score.")
    retrieval_ms_field: str | None = Field("retrieval_ms", description="Path of the reported retrieval time.")
    generation_ms_field: str | None = Field("generation_ms", description="…generation time.")
    tokens_in_field: str | None = Field("tokens_in", description="…input tokens.")
    tokens_out_field: str | None = Field("tokens_out", description="…output tokens.")
    cost_field: str | None = Field("cost_usd", description="…cost in USD.")



#: The settings of the section that decide how a system is run, not how its answers are scored: two runs that
#: differ only in these are comparable.
RUNNING_KEYS = frozenset({"endpoint", "runs_dir", "concurrency", "timeout_s", "score_processes"})


class EvalSettings(_Section):
    """The ``eval`` section: how a system is run (``endpoint``, ``runs_dir``, ``concurrency``, ``timeout_s``), on
    how many cores it is scored (``score_processes``) and how its answers are scored (the rest). See
    :mod:`goldset.evaluation.matcher` for how ``matcher`` decides relevance.
    """

    section: ClassVar[str] = "eval"

    # -- running a system
    endpoint: SystemEndpointSettings = Field(
        default_factory=SystemEndpointSettings, description="How `goldset eval --endpoint URL` talks to the service."
    )
    runs_dir: str | None = Field(None, description="Where run folders go (default: <workspace>/runs).")
    concurrency: int = Field(8, ge=1, le=256, description="Questions in flight at once.")
    timeout_s: float = Field(60.0, gt=0, description="Seconds per question before it is a failed sample.")
    # -- scoring on several cores (changes how fast, never what is scored)
    score_processes: int = Field(
        0,
        ge=0,
        le=256,
        description="Processes that score the samples at once (forked; POSIX only): 0 = one per CPU core, with "
        "at least 1,000 samples each; 1 = this process only. The scores are the same either way.",
    )
    # -- scoring
    ks: list[int] = Field(default_factory=lambda: [1, 3, 5, 10], description="Cut-offs of the @k metrics.")
    matcher: Literal["auto", "text", "chunk_id", "doc_id"] = Field(
        "auto", description="How a retrieved context is judged relevant to a pair's evidence (see the matcher)."
    )
    text_match_min: float = Field(
        0.5,
        gt=0,
        le=1,
        description="Share of a quote's letters a context must hold when the quote is split across contexts.",
    )
    text_match_min_tokens: int = Field(
        8, ge=1, description="A partial quote match must also span at least this many tokens (short quotes: whole)."
    )
    # -- text matcher: systems that index rendered text (see goldset.evaluation.matcher) -------------------------
    text_match_rendered: bool = Field(
        False,
        description="Also compare contexts that show no Markdown/HTML markup with each quote as rendered (link "
        "targets, HTML tags and {#anchor} blocks left out): for systems that index rendered text, such as a crawl of "
        "the documentation site. Off by default: it costs ~10% of matching time.",
    )
    # -- end of the text matcher block
    refusal_patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_REFUSAL_PATTERNS),
        description="Regular expressions that mark an answer as a refusal (searched in the normalised answer).",
    )
    conciseness: ConcisenessSettings = Field(default_factory=ConcisenessSettings, description="The length budget.")
    weights: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_WEIGHTS),
        description="Weights of the overall score, by metric, or {preset: internal_kb | support_faq | tech_docs | "
        "default} (other keys beside preset override single weights).",
    )
    penalties: list[str] = Field(
        default_factory=lambda: ["hallucination"],
        description="Weighted metrics where lower is better: the overall score adds weight × (1 - value).",
    )
    prices: PriceSettings = Field(
        default_factory=PriceSettings, description="Prices for runs that report tokens but no cost."
    )
    # -- the LLM judge (eval.judge): scoring settings too, recorded only in judged runs (see scoring()) -----------
    judge: JudgeSettings = Field(
        default_factory=JudgeSettings, description="The LLM judge of answers (goldset.evaluation.judge)."
    )
    # -- end of the judge block

    @field_validator("ks")
    @classmethod
    def _ks(cls, v: list[int]) -> list[int]:
        if not v:
            raise ValueError("give at least one cut-off, e.g. [1, 3, 5, 10]")
        if any(k < 1 for k in v):
            raise ValueError("cut-offs must be positive integers")
        return sorted(set(v))

    @field_validator("refusal_patterns")
    @classmethod
    def _patterns(cls, v: list[str]) -> list[str]:
        for i, pattern in enumerate(v):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {i} ({pattern!r}) is not a valid regular expression: {exc}") from None
        return v

    @field_validator("weights", mode="before")
    @classmethod
    def _preset(cls, v: Any) -> Any:
        return resolve_weights(v)

    @field_validator("weights")
    @classmethod
    def _weights(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [name for name, w in v.items() if w < 0]
        if bad:
            raise ValueError(f"weight of {bad[0]!r} is negative; weights must be >= 0")
        return v

    def scoring(self, judge: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The settings that change scores, as stored in a run (``RunMeta.metric_config``): runs whose scoring
        settings differ cannot be compared.

        The ``judge`` block is recorded only for a judged run, with ``judge`` (what else changes judge scores: the
        judge model, the prompt hashes; :meth:`goldset.evaluation.judge.JudgePlan.identity`) laid over its settings.
        A run judged by another model or prompt then differs here, and a run without the judge (``--no-judge``, or
        no judge endpoint) records the same settings as a run made before goldset had a judge.
        """
        out = self.model_dump(mode="json", exclude=set(RUNNING_KEYS) | {"judge"})
        if judge is not None:
            out["judge"] = {**self.judge.scoring(), **judge}
        return out
