"""LLM-judge metrics: pure functions over what the judge decided about one sample (:class:`JudgedSample`).

The judge (:mod:`goldset.evaluation.judge`) asks at most three calls per sample and turns each validated reply
into a tally here; these functions turn the tallies into numbers. A part is ``None`` when its call was not made
(not configured, not applicable) or failed: every metric reading it is then ``None`` too, and the judge counts the
failures apart (``RunSummary.judge_failed``) so a failed judgement never counts as 0 or 1.

Which samples a metric applies to:

- claim metrics (faithfulness, hallucination, contradiction, context_utilization): every answered sample whose
  answer makes at least one claim (a bare refusal makes none: nothing to check); context_utilization needs
  retrieved contexts; reference_contradiction needs a reference (answerable pairs);
- completeness: answerable pairs (the reference's claims, or an ``open_ended`` pair's key points);
  readings_acknowledged: ``ambiguous`` pairs; answer_relevancy: answerable pairs;
- context_relevance: every sample that retrieved something (reference-free: it needs no golden answer);
- correct_refusal_judged: unanswerable pairs; false_refusal_judged: answerable ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from goldset.evaluation.metrics.registry import metric


@dataclass(frozen=True, slots=True)
class ClaimTally:
    """The answer's claims as judged against the retrieved contexts (and the reference, when there is one)."""

    supported: int
    contradicted: int
    not_found: int
    contexts_used: int  # distinct retrieved contexts supporting at least one claim
    n_contexts: int  # retrieved contexts the judge read
    ref_judged: int = 0  # claims judged against a reference (0: no reference)
    ref_contradicted: int = 0
    said_supported: int = 0  # claims the judge marked supported, before their quotes were checked
    downgraded: int = 0  # of those, counted as not found: the quote is not in the context it names

    @property
    def n(self) -> int:
        """Claims in the answer."""
        return self.supported + self.contradicted + self.not_found


@dataclass(frozen=True, slots=True)
class CoverageTally:
    """The reference's claims (key points of an ``open_ended`` pair) the answer covers."""

    covered: int
    total: int  # points found in the reference (the judge's others are not counted)
    readings_acknowledged: bool | None = None  # ambiguous pairs only
    listed: int = 0  # points the judge listed, found in the reference or not


@dataclass(frozen=True, slots=True)
class RelevanceTally:
    """The judge's answer-relevancy rating (1–5) and, with embeddings, the cosines of its reverse questions."""

    rating: int
    cosines: tuple[float, ...] | None = None


@dataclass(frozen=True, slots=True)
class ContextTally:
    """Retrieved contexts the judge found relevant to the question, of those it judged."""

    relevant: int
    judged: int


@dataclass(frozen=True, slots=True)
class JudgedSample:
    """The per-sample input of the ``judge`` family. ``question_type`` is the pair's type as a string (the judge
    knows ``ambiguous`` and ``open_ended`` by name); ``stance`` is ``answered``, ``declined`` or ``hedged``."""

    question_type: str
    claims: ClaimTally | None = None
    coverage: CoverageTally | None = None
    relevance: RelevanceTally | None = None
    contexts: ContextTally | None = None
    stance: str | None = None

    @property
    def answerable(self) -> bool:
        """Everything but ``unanswerable`` pairs."""
        return self.question_type != "unanswerable"


_RAGAS = "Es et al., RAGAS: Automated Evaluation of Retrieval Augmented Generation, EACL 2024 (demos)"
_FACTS = "Min et al., FActScore: Fine-grained Atomic Evaluation of Factual Precision, EMNLP 2023"


@metric(
    name="faithfulness",
    family="judge",
    description="Answer claims supported by the retrieved contexts / answer claims (LLM judge; one call decomposes "
    "the answer and gives each claim a verdict, the supporting context and a quote).",
    citation=_RAGAS,
)
def faithfulness(j: JudgedSample) -> float | None:
    c = j.claims
    return c.supported / c.n if c is not None and c.n else None


@metric(
    name="hallucination",
    family="judge",
    description="Answer claims contradicted by or not found in the retrieved contexts / answer claims (= 1 - "
    "faithfulness); the overall score counts it as a penalty.",
    citation=f"{_RAGAS} (complement of faithfulness); atomic claims as in {_FACTS}",
    higher_is_better=False,
    on_failure="skip",
)
def hallucination(j: JudgedSample) -> float | None:
    c = j.claims
    return (c.contradicted + c.not_found) / c.n if c is not None and c.n else None


@metric(
    name="contradiction",
    family="judge",
    description="Answer claims a retrieved context contradicts / answer claims: the part of hallucination that "
    "goes against the sources, reported apart from claims the sources do not mention.",
    citation="three-way verdicts (entailed / contradicted / neutral) of natural language inference; "
    "DeepEval's faithfulness verdicts yes / no / idk (deepeval.com/docs/metrics-faithfulness)",
    higher_is_better=False,
    on_failure="skip",
)
def contradiction(j: JudgedSample) -> float | None:
    c = j.claims
    return c.contradicted / c.n if c is not None and c.n else None


@metric(
    name="context_utilization",
    family="judge",
    description="Retrieved contexts (of those the judge read) that support at least one answer claim / contexts "
    "read: how much of what was retrieved the answer used.",
    citation="goldset's definition, counted per context; cf. utilization in Friel et al., RAGBench: Explainable "
    "Benchmark for Retrieval-Augmented Generation Systems, 2024",
    on_failure="skip",
)
def context_utilization(j: JudgedSample) -> float | None:
    c = j.claims
    return c.contexts_used / c.n_contexts if c is not None and c.n and c.n_contexts else None


@metric(
    name="reference_contradiction",
    family="judge",
    description="Answerable pairs: answer claims that contradict the reference answer / answer claims (judged in "
    "the claims call): wrong answers, as opposed to incomplete ones (completeness).",
    citation="the factual part of answer correctness in "
    + _RAGAS
    + " (docs.ragas.io, answer_correctness), counting contradictions only",
    higher_is_better=False,
    on_failure="skip",
)
def reference_contradiction(j: JudgedSample) -> float | None:
    c = j.claims
    if c is None or not j.answerable or not c.ref_judged:
        return None
    return c.ref_contradicted / c.ref_judged


@metric(
    name="completeness",
    family="judge",
    description="Answerable pairs: claims of the reference answer the answer covers / reference claims; for "
    "open_ended pairs the reference's key points. A failed sample covered nothing (0).",
    citation="claim recall against the reference, as in the recall of RAGAS factual correctness "
    "(docs.ragas.io, factual_correctness) and context recall; " + _RAGAS,
)
def completeness(j: JudgedSample) -> float | None:
    c = j.coverage
    if c is None or not j.answerable or not c.total:
        return None
    return c.covered / c.total


@metric(
    name="readings_acknowledged",
    family="judge",
    description="Ambiguous pairs: 1 if the answer names the question's readings or asks which one is meant, 0 if "
    "it silently picks one.",
    citation="Min et al., AmbigQA: Answering Ambiguous Open-domain Questions, EMNLP 2020",
)
def readings_acknowledged(j: JudgedSample) -> float | None:
    c = j.coverage
    if c is None or j.question_type != "ambiguous" or c.readings_acknowledged is None:
        return None
    return 1.0 if c.readings_acknowledged else 0.0


@metric(
    name="answer_relevancy",
    family="judge",
    description="Answerable pairs: the judge's rating of how directly the answer addresses the question, 1–5 "
    "mapped to 0–1 ((rating - 1) / 4), with a reason (stored per sample). A refusal rates 1.",
    citation="rubric rating by an LLM judge: Zheng et al., Judging LLM-as-a-Judge with MT-Bench and Chatbot "
    "Arena, NeurIPS 2023; Liu et al., G-Eval, EMNLP 2023",
)
def answer_relevancy(j: JudgedSample) -> float | None:
    r = j.relevance
    if r is None or not j.answerable:
        return None
    return (min(5, max(1, r.rating)) - 1) / 4


@metric(
    name="answer_relevancy_embedding",
    family="judge",
    description="Answerable pairs, with an embedding model: mean cosine similarity of the question with the "
    "questions the judge writes back from the answer (reverse questions).",
    citation="response relevancy of " + _RAGAS + " (docs.ragas.io, answer_relevance)",
)
def answer_relevancy_embedding(j: JudgedSample) -> float | None:
    r = j.relevance
    if r is None or not j.answerable or not r.cosines:
        return None
    return math.fsum(r.cosines) / len(r.cosines)


@metric(
    name="context_relevance",
    family="judge",
    description="Retrieved contexts (of those the judge read) relevant to the question / contexts read; "
    "reference-free, so it also monitors questions that have no golden answer.",
    citation="context relevance of " + _RAGAS + "; Saad-Falcon et al., ARES, NAACL 2024",
)
def context_relevance(j: JudgedSample) -> float | None:
    c = j.contexts
    return c.relevant / c.judged if c is not None and c.judged else None


@metric(
    name="correct_refusal_judged",
    family="judge",
    description="Unanswerable pairs: 1 if the judge finds the answer declined, 0 if it answered or hedged (said "
    "the sources do not cover it, then guessed). The LLM version of correct_refusal (patterns).",
    citation="Rajpurkar et al., Know What You Don't Know: Unanswerable Questions for SQuAD, ACL 2018",
)
def correct_refusal_judged(j: JudgedSample) -> float | None:
    if j.answerable or j.stance is None:
        return None
    return 1.0 if j.stance == "declined" else 0.0


@metric(
    name="false_refusal_judged",
    family="judge",
    description="Answerable pairs the system answered: 1 if the judge finds the answer declined although the KB "
    "answers it. Mean = rate (lower wins); failed samples are left out. The LLM version of false_refusal.",
    citation="Rajpurkar et al., Know What You Don't Know: Unanswerable Questions for SQuAD, ACL 2018",
    higher_is_better=False,
    on_failure="skip",
)
def false_refusal_judged(j: JudgedSample) -> float | None:
    if not j.answerable or j.stance is None:
        return None
    return 1.0 if j.stance == "declined" else 0.0


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 when either is all zeros)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
