"""One call per chunk: its question types (seeded draw), language, prompt and, for the types that read two
chunks (multi_hop, ambiguous, open_ended), a partner chunk."""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldset.errors import ConfigError
from goldset.generation.partners import PartnerFinder
from goldset.generation.reply import GeneratedPairs, reply_model
from goldset.generation.settings import LATER_TYPES, TYPE_GENERATIONS, GenerateSettings
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
    "zh-TW": "Traditional Chinese (繁體中文)",
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
#: Types whose call shows a partner chunk when the KB has one: multi_hop needs it (else the fallback above);
#: an ambiguous question's readings and an open_ended answer's key points usually span two chunks, but one
#: chunk can hold them too, so those two keep their type without a partner.
PARTNER_TYPES = (QuestionType.multi_hop, QuestionType.ambiguous, QuestionType.open_ended)

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
    def reply_model(self) -> type[GeneratedPairs]:
        """The reply schema of the call: its type enum lists the first six types and the later ones drawn."""
        return reply_model(self.types)

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The chunks shown in the call, the primary chunk first."""
        return (self.chunk, self.partner) if self.partner is not None else (self.chunk,)

    def messages(self) -> list[dict[str, str]]:
        """The chat messages of the call (the prompt rendered with the chunks, types and language)."""
        return render_messages(self.prompt, self.chunk, self.partner, self.types, self.language)

    def fewer(self, count: int) -> CallPlan:
        """The same call asking for only the first ``count`` of its types (in plan order, i.e. the order of
        :class:`QuestionType`), for asking again after a reply cut off at max_tokens. The chunks shown and the
        prompt stay those of the plan (a partner chunk stays shown even when no type left needs it: the
        two-chunk prompt writes the other types from the first chunk), so only the count and type lines change."""
        return dataclasses.replace(self, types=self.types[: max(1, count)])


def fewer_pairs(count: int) -> int:
    """How many pairs a call asks for after a reply asking for ``count`` was cut off: half, rounded up
    (3 → 2 → 1, 5 → 3 → 2 → 1)."""
    return math.ceil(count / 2)


def fitted_max_tokens(pairs: int, settings: GenerateSettings, endpoint_max_tokens: int | None) -> int | None:
    """The max_tokens of a generation call asking for ``pairs`` pairs: ``pairs`` ×
    ``generate.max_tokens_per_pair`` capped at the endpoint's max_tokens, or, with no per-pair setting, the
    endpoint's max_tokens shared over ``pairs_per_chunk`` (so a call for every pair sends exactly the endpoint's
    max_tokens), rounded up; ``None`` (no limit sent) when neither is set. The client lowers it further to what the
    model's context leaves after the prompt."""
    if settings.max_tokens_per_pair is not None:
        budget = pairs * settings.max_tokens_per_pair
        return budget if endpoint_max_tokens is None else min(budget, endpoint_max_tokens)
    if endpoint_max_tokens is None:
        return None
    return max(1, min(endpoint_max_tokens, math.ceil(endpoint_max_tokens * pairs / settings.pairs_per_chunk)))


def plan_types(chunk_id: str, weights: dict[str, float], count: int, seed: int) -> tuple[QuestionType, ...]:
    """The question types asked of one chunk: ``count`` weighted draws seeded by (seed, chunk id), sorted.

    Per chunk, not per run, so adding documents or using ``--limit`` never changes what an existing chunk is
    asked (and so never turns a cache hit into a miss).

    The groups of :data:`TYPE_GENERATIONS` are drawn in turn, each from its own seeded stream: the first six
    types exactly as before later types existed; then each later group takes over each draw with probability
    (its weight) / (its weight + the weight of the groups before it), a type of the group chosen by weight. Every
    type's share is its weight over the total, and a chunk whose draws no later group took keeps its draw.
    """
    drawn: list[str] = []
    before = 0.0
    for n, group in enumerate(TYPE_GENERATIONS):
        names = [t.value for t in group if weights.get(t.value, 0) > 0]
        if not names:
            continue
        group_weights = [weights[name] for name in names]
        total = sum(group_weights)
        rng = random.Random(hash_obj(["generate-types", seed, chunk_id] if n == 0 else
                                     ["generate-types", n, seed, chunk_id]))  # fmt: skip
        if not drawn:
            drawn = rng.choices(names, weights=group_weights, k=count)
        else:
            share = total / (before + total)
            for i in range(count):
                takes, pick = rng.random() < share, rng.choices(names, weights=group_weights)[0]
                if takes:
                    drawn[i] = pick
        before += total
    order = {t.value: i for i, t in enumerate(QuestionType)}
    return tuple(QuestionType(n) for n in sorted(drawn, key=order.__getitem__))


def check_prompt_describes(prompt: Prompt, weights: dict[str, float]) -> None:
    """Refuse a prompt that never names a later type (:data:`LATER_TYPES`) the weights can draw: a workspace's
    ``prompts/`` copied before the type existed would ask for it without saying what it is."""
    text = prompt.system + prompt.user
    for t in LATER_TYPES:
        if weights.get(t.value, 0) > 0 and t.value not in text:
            raise ConfigError(
                f"{prompt.path}: generate.types gives question type {t.value!r} a weight, but this prompt does not "
                f"describe it (it predates the type); add its instructions from goldset's default "
                f"prompts/{prompt.id}.md, or set generate.types.{t.value}: 0"
            )


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
        check_prompt_describes(self.single, settings.types)
        self.multi: Prompt | None = None
        self.finder: PartnerFinder | None = None

    def load_multi(self) -> Prompt:
        """The two-chunk prompt, loaded (and checked) once."""
        if self.multi is None:
            multi = load_prompt(PROMPT_MULTI_HOP, self.prompts_dir)
            check_prompt_describes(multi, self.settings.types)
            self.multi = multi
        return self.multi

    def types(self, chunk: Chunk) -> tuple[QuestionType, ...]:
        """The question types drawn for ``chunk`` (:func:`plan_types`), before any multi-hop fallback."""
        settings = self.settings
        return plan_types(chunk.id, settings.types, settings.pairs_per_chunk, settings.seed)

    def plan(self, chunk: Chunk) -> CallPlan:
        """The call for ``chunk``: a draw of a :data:`PARTNER_TYPES` type gets a partner chunk and the two-chunk
        prompt; without a partner in the KB, multi_hop becomes ``MULTI_HOP_FALLBACK`` (the others stay)."""
        types = self.types(chunk)
        language = chunk.language if self.settings.language == "auto" else self.settings.language
        partner = None
        if any(t in PARTNER_TYPES for t in types):
            if self.finder is None:
                self.finder = PartnerFinder(self.kb_chunks)
            partner = self.finder.partner(chunk)
            if partner is None and QuestionType.multi_hop in types:
                types = tuple(
                    sorted(
                        (MULTI_HOP_FALLBACK if t is QuestionType.multi_hop else t for t in types),
                        key=list(QuestionType).index,
                    )
                )
        prompt = self.single if partner is None else self.load_multi()
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
    if any(t in PARTNER_TYPES for c in selected for t in planner.types(c)):
        try:
            planner.load_multi()
        except Exception:
            plans = {id(c): p for c, p in zip(selected, build_plans(selected, kb_chunks, settings, prompts_dir),
                                              strict=True)}
            return lambda chunk: plans[id(chunk)]
    return planner.plan
