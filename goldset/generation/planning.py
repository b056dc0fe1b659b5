"""One call per chunk: its question types (seeded draw), language, prompt and, for multi-hop, partner chunk."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldset.generation.partners import PartnerFinder
from goldset.generation.settings import GenerateSettings
from goldset.hashing import hash_obj
from goldset.prompts import Prompt, load_prompt
from goldset.schema import (
    Chunk,
    QuestionType,
)

PROMPT_SINGLE = "generate"
PROMPT_MULTI_HOP = "generate_multi_hop"
#: What the prompt calls each language; other codes are passed through as they are.
LANGUAGE_NAMES = {
    "en": "English",
    "zh": "Chinese (简体中文)",
    "ja": "Japanese (日本語)",
    "ko": "Korean (한국어)",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "pt": "Portuguese",
    "ru": "Russian",
}
#: The type a chunk gets instead of multi_hop when the KB has no second chunk to pair it with.
MULTI_HOP_FALLBACK = QuestionType.reasoning

# ------------------------------------------------------------------------------------------------ planning


@dataclass(frozen=True)
class CallPlan:
    """One generation call: which chunk(s), which types, which language, which prompt."""

    chunk: Chunk
    partner: Chunk | None
    types: tuple[QuestionType, ...]
    language: str
    prompt: Prompt

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The chunks shown in the call, the primary chunk first."""
        return (self.chunk, self.partner) if self.partner is not None else (self.chunk,)

    def messages(self) -> list[dict[str, str]]:
        """The chat messages of the call (the prompt rendered with the chunks, types and language)."""
        return render_messages(self.prompt, self.chunk, self.partner, self.types, self.language)


def plan_types(chunk_id: str, weights: dict[str, float], count: int, seed: int) -> tuple[QuestionType, ...]:
    """The question types asked of one chunk: ``count`` weighted draws seeded by (seed, chunk id), sorted.

    Per chunk, not per run, so adding documents or using ``--limit`` never changes what an existing chunk is
    asked (and so never turns a cache hit into a miss).
    """
    names = [t.value for t in QuestionType if weights.get(t.value, 0) > 0]
    rng = random.Random(hash_obj(["generate-types", seed, chunk_id]))
    drawn = rng.choices(names, weights=[weights[n] for n in names], k=count)
    order = {t.value: i for i, t in enumerate(QuestionType)}
    return tuple(QuestionType(n) for n in sorted(drawn, key=order.__getitem__))


def describe_types(types: Sequence[QuestionType]) -> str:
    """``- factual: 2`` lines, in a fixed order, for the prompt."""
    counts = Counter(types)
    return "\n".join(f"- {t.value}: {counts[t]}" for t in QuestionType if counts[t])


def render_messages(
    prompt: Prompt, chunk: Chunk, partner: Chunk | None, types: Sequence[QuestionType], language: str
) -> list[dict[str, str]]:
    """``prompt`` rendered for one call: the chunk (and partner), the language by name and the type mix."""
    variables: dict[str, Any] = {
        "chunk_id": chunk.id,
        "chunk_text": chunk.text.strip(),
        "doc_title": chunk.doc_title or chunk.doc_id,
        "doc_id": chunk.doc_id,
        "heading_path": " > ".join(chunk.heading_titles or chunk.heading_path) or "(top of the document)",
        "language": LANGUAGE_NAMES.get(language, language),
        "language_code": language,
        "count": len(types),
        "question_types": describe_types(types),
    }
    if partner is not None:
        variables |= {
            "partner_chunk_id": partner.id,
            "partner_chunk_text": partner.text.strip(),
            "partner_doc_title": partner.doc_title or partner.doc_id,
            "partner_heading_path": " > ".join(partner.heading_titles or partner.heading_path)
            or "(top of the document)",
        }
    return prompt.render(**variables)


def build_plans(
    selected: Sequence[Chunk],
    kb_chunks: Sequence[Chunk],
    settings: GenerateSettings,
    prompts_dir: Path | None,
) -> list[CallPlan]:
    """One plan per selected chunk. Partners are looked up in the whole KB, not the selection, so a chunk's
    call is the same whichever subset of chunks a run selects."""
    planner = Planner(kb_chunks, settings, prompts_dir)
    return [planner.plan(chunk) for chunk in selected]


class Planner:
    """Plans one chunk at a time (:func:`build_plans` in order, or a run as it reaches each chunk): the prompts
    and the partner finder are loaded or built once, when first needed."""

    def __init__(self, kb_chunks: Sequence[Chunk], settings: GenerateSettings, prompts_dir: Path | None) -> None:
        self.kb_chunks = kb_chunks
        self.settings = settings
        self.prompts_dir = prompts_dir
        self.single = load_prompt(PROMPT_SINGLE, prompts_dir)
        self.multi: Prompt | None = None
        self.finder: PartnerFinder | None = None

    def types(self, chunk: Chunk) -> tuple[QuestionType, ...]:
        """The question types drawn for ``chunk`` (:func:`plan_types`), before any multi-hop fallback."""
        settings = self.settings
        return plan_types(chunk.id, settings.types, settings.pairs_per_chunk, settings.seed)

    def plan(self, chunk: Chunk) -> CallPlan:
        """The call for ``chunk``: a multi-hop draw gets a partner chunk and the multi-hop prompt, or becomes
        ``MULTI_HOP_FALLBACK`` when the KB has no partner for it."""
        types = self.types(chunk)
        language = chunk.language if self.settings.language == "auto" else self.settings.language
        partner = None
        if QuestionType.multi_hop in types:
            if self.finder is None:
                self.finder = PartnerFinder(self.kb_chunks)
            partner = self.finder.partner(chunk)
            if partner is None:
                types = tuple(
                    sorted(
                        (MULTI_HOP_FALLBACK if t is QuestionType.multi_hop else t for t in types),
                        key=list(QuestionType).index,
                    )
                )
        prompt = self.single
        if partner is not None:
            if self.multi is None:
                self.multi = load_prompt(PROMPT_MULTI_HOP, self.prompts_dir)
            prompt = self.multi
        return CallPlan(chunk, partner, types, language, prompt)


def planner_for_run(
    selected: Sequence[Chunk], kb_chunks: Sequence[Chunk], settings: GenerateSettings, prompts_dir: Path | None
) -> Callable[[Chunk], CallPlan]:
    """What :func:`build_plans` gives each chunk, worked out when the run reaches the chunk rather than all before
    the first call: the partner search (~50 ms on a few hundred chunks) then runs while calls are in flight.

    A prompt that cannot be loaded still stops the run before its first call, as with :func:`build_plans`: the
    prompts are loaded here, and if the multi-hop one fails, every plan is built now (which raises exactly when
    :func:`build_plans` would: when some chunk gets a partner).
    """
    planner = Planner(kb_chunks, settings, prompts_dir)
    if any(QuestionType.multi_hop in planner.types(c) for c in selected):
        try:
            planner.multi = load_prompt(PROMPT_MULTI_HOP, prompts_dir)
        except Exception:
            plans = {id(c): p for c, p in zip(selected, build_plans(selected, kb_chunks, settings, prompts_dir),
                                              strict=True)}
            return lambda chunk: plans[id(chunk)]
    return planner.plan
