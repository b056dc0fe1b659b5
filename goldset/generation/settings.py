"""The ``generate`` section of goldset.yaml."""

from __future__ import annotations

import math
import re
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldset.schema import QuestionType

#: The question types in the order goldset gained them. The draw adds each later group on top of the earlier
#: groups' draw (:func:`goldset.generation.planning.plan_types`), and a call's reply schema lists the first group
#: and the later types drawn (:func:`goldset.generation.reply.reply_model`), so giving a new type a weight changes
#: only the chunks that draw it: every other chunk is asked exactly what it was asked before, and its call stays
#: a journal hit.
TYPE_GENERATIONS: tuple[tuple[QuestionType, ...], ...] = (
    (
        QuestionType.factual,
        QuestionType.reasoning,
        QuestionType.comparison,
        QuestionType.multi_hop,
        QuestionType.procedural,
        QuestionType.unanswerable,
    ),
    (QuestionType.ambiguous, QuestionType.open_ended),
)
#: Types added after the first six: a workspace prompt written before them does not describe them.
LATER_TYPES = tuple(t for group in TYPE_GENERATIONS[1:] for t in group)
#: Relative weights (they need not add up to 1). The six original types keep the numbers they always had;
#: ``ambiguous`` and ``open_ended`` came later with 0.05 each (about 4.5% of the draws each, 1/1.10 of the rest
#: for the six). The draw (:func:`goldset.generation.planning.plan_types`) adds later types on top of the older
#: ones' draw, so a chunk that draws neither keeps exactly the types, and the call, it had before.
DEFAULT_TYPE_WEIGHTS: dict[str, float] = {
    "factual": 0.30,
    "reasoning": 0.20,
    "procedural": 0.15,
    "comparison": 0.10,
    "multi_hop": 0.15,
    "unanswerable": 0.10,
    "ambiguous": 0.05,
    "open_ended": 0.05,
}


class GenerateSettings(BaseModel):
    """The ``generate`` section of goldset.yaml."""

    section: ClassVar[str] = "generate"

    model_config = ConfigDict(extra="forbid")

    pairs_per_chunk: int = Field(3, ge=1, le=20, description="Pairs asked for in one call per chunk.")
    types: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_TYPE_WEIGHTS),
        description="Relative weight of each question type (a type left out has weight 0); 0 turns a type off.",
    )
    language: str = Field(
        "auto",
        description=(
            "'auto' = each chunk's language, or a code such as 'en', 'zh', 'zh-TW' (a name such as 'Chinese' or "
            "'中文' is read as its code)."
        ),
    )
    concurrency: int | None = Field(None, ge=1, le=512, description="Overrides llm concurrency for generation.")
    seed: int = Field(0, description="Seeds the type draw per chunk and is sent to the model.")
    min_tokens: int = Field(20, ge=0, description="Chunks with fewer tokens are skipped (headings, stubs).")
    output_tokens_per_pair: int = Field(150, ge=1, description="Expected reply tokens per pair, for estimates.")
    max_tokens_per_pair: int | None = Field(
        None,
        ge=1,
        description=(
            "Reply limit per pair asked: a call asking for k pairs sends max_tokens k × this (never above the "
            "endpoint's max_tokens, nor what the model's context leaves). Unset: the endpoint's max_tokens shared "
            "over pairs_per_chunk (a call for every pair sends it whole, a smaller one its share); neither set: "
            "no limit is sent (the server's default)."
        ),
    )
    flush_seconds: float = Field(2.0, ge=0, description="Rewrite the candidates file at most this often.")

    @field_validator("language")
    @classmethod
    def _language_code(cls, value: str) -> str:
        return language_code(value)

    @field_validator("types")
    @classmethod
    def _known_types(cls, v: dict[str, float]) -> dict[str, float]:
        known = {t.value for t in QuestionType}
        for name, weight in v.items():
            if name not in known:
                raise ValueError(f"unknown question type {name!r}; known: {', '.join(sorted(known))}")
            if not isinstance(weight, int | float) or weight < 0 or math.isnan(weight):
                raise ValueError(f"weight of {name!r} must be a number >= 0")
        if not any(w > 0 for w in v.values()):
            raise ValueError("at least one question type needs a weight > 0")
        return v



#: Names a user may write instead of a language code (lower-cased), and the code chunks and pairs carry (the
#: prompt's own name of each code: ``goldset.generation.planning.LANGUAGE_NAMES``).
LANGUAGE_CODES = {
    "english": "en", "英文": "en", "英语": "en", "英語": "en",
    "chinese": "zh", "中文": "zh", "汉语": "zh", "漢語": "zh", "简体中文": "zh",
    "繁體中文": "zh-TW", "繁体中文": "zh-TW",
    "japanese": "ja", "日本語": "ja", "日语": "ja", "日文": "ja",
    "korean": "ko", "한국어": "ko", "韩语": "ko", "韓語": "ko", "韩文": "ko",
    "french": "fr", "français": "fr", "german": "de", "deutsch": "de", "spanish": "es", "español": "es",
    "portuguese": "pt", "português": "pt", "russian": "ru", "русский": "ru",
}  # fmt: skip
_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")


def language_code(value: str) -> str:
    """``generate.language`` as goldset writes it on pairs: ``auto``, a code with its first part lower-cased
    (``ZH`` → ``zh``, ``zh_TW`` → ``zh-TW``), or the code of a name (``Chinese``, ``中文`` → ``zh``). Anything
    else is an error: the pairs' language decides the per-language figures, and ``中文`` beside ``zh`` would
    split them (and skip the wrong-language check of each reply)."""
    text = value.strip()
    if text.lower() == "auto":
        return "auto"
    named = LANGUAGE_CODES.get(text.lower())
    if named is not None:
        return named
    if not _CODE.fullmatch(text):
        raise ValueError(
            f"{value!r} is not a language code: use auto, or a code such as en, zh, ja, ko (zh-TW for a region)"
        )
    primary, _, rest = text.replace("_", "-").partition("-")
    return primary.lower() + (f"-{rest}" if rest else "")
