"""Reading the pattern of a run's metrics and naming the likely cause, as practitioners do.

Each rule is a small pure function registered with the metrics it reads. A rule fires only when every one of its
inputs was measured in the run: a missing judge metric never produces a diagnosis by default. Each input may list
alternatives (``context_recall`` or ``recall@5``...): the first one the run measured is used.

Rules read quality metrics over the questions the system *answered* (``RunSummary.answered``): failed questions
score 0 on recall, and a run where a third of the questions timed out would otherwise be diagnosed with poor
chunking. Failures have their own rule (``system-errors``, from ``error_rate``).

The cut-offs below are rules of thumb, not laws: they are stated in every finding so a reader can judge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from goldset.schema import RunSummary

HIGH = 0.8
LOW = 0.5
VERY_LOW = 0.3

RECALL = ("context_recall", "recall@5", "recall@10", "recall@3")
PRECISION = ("context_precision", "precision@5", "precision@3")
ANSWER = ("answer_relevancy", "completeness", "token_f1", "rouge_l")
FAITHFUL = ("faithfulness",)


@dataclass(frozen=True)
class Diagnosis:
    """A rule that fired: what the numbers say, the likely cause, what to try, and the values it read."""

    rule: str
    finding: str  # what the numbers say
    cause: str  # the likely cause
    advice: str  # what to try
    inputs: dict[str, float] = field(default_factory=dict)
    severity: str = "warning"  # "warning" or "critical"


@dataclass(frozen=True)
class Rule:
    """A registered rule: its name, its inputs (alternative metric names each) and the function deciding."""

    name: str
    inputs: tuple[tuple[str, ...], ...]  # one tuple of alternative metric names per input
    fn: Callable[[list[float], RunSummary], Diagnosis | None]


_RULES: list[Rule] = []


RuleFn = Callable[[list[float], RunSummary], Diagnosis | None]


def rule(name: str, *inputs: tuple[str, ...]) -> Callable[[RuleFn], RuleFn]:
    """Register a rule reading ``inputs`` (each a tuple of alternative metric names)."""

    def register(fn: RuleFn) -> RuleFn:
        _RULES.append(Rule(name, tuple(inputs), fn))
        return fn

    return register


def list_rules() -> list[Rule]:
    """Every registered rule, in registration order."""
    return list(_RULES)


def answered_view(summary: RunSummary) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Quality metric means (overall, per type) over the questions the system answered.

    Equal to ``overall`` / ``by_type`` when no question failed; empty when every question failed (or the summary was
    written before goldset kept ``answered``): then no quality rule can run.
    """
    if summary.n_failed == 0:
        return summary.overall, summary.by_type
    return summary.answered, summary.answered_by_type


def measured(summary: RunSummary, names: tuple[str, ...]) -> tuple[str, float] | None:
    """The first of ``names`` the run measured: quality metrics over answered questions, then system figures."""
    overall, _ = answered_view(summary)
    for name in names:
        if overall.get(name) is not None:
            return name, overall[name]
        if summary.system.get(name) is not None:
            return name, summary.system[name]
    return None


def _fmt(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in values.items())


@rule("generation-prompt", FAITHFUL, ANSWER)
def _faithful_but_off_target(v: list[float], s: RunSummary) -> Diagnosis | None:
    faith, answer = v
    if faith >= HIGH and answer < LOW:
        return Diagnosis(
            "generation-prompt",
            f"answers are faithful to the contexts (≥ {HIGH}) but do not answer the question well (< {LOW})",
            "the generation prompt: the model sticks to the contexts but does not address what was asked",
            "make the prompt restate the question and ask for a direct answer first; check the answer format",
        )
    return None


@rule("retrieval-recall", RECALL)
def _low_recall(v: list[float], s: RunSummary) -> Diagnosis | None:
    (recall,) = v
    if recall < LOW:
        return Diagnosis(
            "retrieval-recall",
            f"the evidence is often not retrieved, even on the questions the system answered (recall < {LOW})",
            "chunking or retrieval: the passages that hold the answer are not found",
            "try other chunk sizes/overlap, hybrid (BM25 + dense) search, query rewriting, or a larger k",
            severity="critical" if recall < VERY_LOW else "warning",
        )
    return None


@rule("retrieval-precision", PRECISION)
def _low_precision(v: list[float], s: RunSummary) -> Diagnosis | None:
    (precision,) = v
    if precision < LOW:
        return Diagnosis(
            "retrieval-precision",
            f"most retrieved contexts are not relevant (precision < {LOW})",
            "too much noise in the contexts: relevant passages are ranked low or drowned out",
            "add a reranker, shrink chunks, or pass fewer contexts to the generator",
        )
    return None


@rule("good-retrieval-poor-answers", RECALL, ANSWER)
def _good_retrieval_poor_answers(v: list[float], s: RunSummary) -> Diagnosis | None:
    recall, answer = v
    if recall >= HIGH and answer < VERY_LOW:
        return Diagnosis(
            "good-retrieval-poor-answers",
            f"the evidence is retrieved (recall ≥ {HIGH}) but answers match the references poorly (< {VERY_LOW})",
            "the generation step: contexts are found but not used, or answers are in another form than expected",
            "check that the contexts reach the prompt (truncation, ordering) and the answer language and length",
        )
    return None


@rule("unfaithful-answers", FAITHFUL)
def _unfaithful(v: list[float], s: RunSummary) -> Diagnosis | None:
    (faith,) = v
    if faith < LOW:
        return Diagnosis(
            "unfaithful-answers",
            f"answers often state things the contexts do not support (faithfulness < {LOW})",
            "hallucination: the model answers from its own knowledge",
            "tell the prompt to answer only from the contexts and to say when they do not contain the answer",
            severity="critical",
        )
    return None


@rule("no-refusal", ("correct_refusal",))
def _no_refusal(v: list[float], s: RunSummary) -> Diagnosis | None:
    (refusal,) = v
    if refusal < LOW:
        return Diagnosis(
            "no-refusal",
            f"unanswerable questions get answers instead of a refusal (correct refusal < {LOW})",
            "no refusal policy: the system answers whatever it retrieves",
            "instruct the model to refuse when the contexts do not answer; consider a retrieval score cut-off",
        )
    return None


@rule("over-refusal", ("false_refusal",))
def _over_refusal(v: list[float], s: RunSummary) -> Diagnosis | None:
    (false_refusal,) = v
    if false_refusal > 0.2:
        return Diagnosis(
            "over-refusal",
            "the system refuses answerable questions (false refusal > 0.2 of the answers it gave)",
            "a refusal policy that is too strict, or retrieval that misses the evidence",
            "loosen the refusal instruction; check recall on the refused questions",
        )
    return None


@rule("system-errors", ("error_rate",))
def _errors(v: list[float], s: RunSummary) -> Diagnosis | None:
    (rate,) = v
    if rate > 0.05:
        return Diagnosis(
            "system-errors",
            f"{rate:.0%} of the questions failed or are missing from the run",
            "the system itself: timeouts, exceptions or a run file that lacks pairs",
            "look at the failed samples' errors (samples.jsonl, field error) before reading any other metric",
            severity="critical",
        )
    return None


#: Question types whose evidence spans several passages.
MULTI_PASSAGE_TYPES = ("multi_hop", "comparison", "ambiguous", "open_ended")


@rule("multi-passage-retrieval", RECALL)
def _multi_passage(v: list[float], s: RunSummary) -> Diagnosis | None:
    """Questions that need several passages (multi_hop, comparison, ambiguous: one per reading, open_ended: the key
    points of several chunks) find far less evidence than the rest."""
    (recall,) = v
    overall, by_type = answered_view(s)
    name = next((n for n in RECALL if n in overall), None)
    lagging = {
        t: by_type[t][name]
        for t in MULTI_PASSAGE_TYPES
        if name and name in by_type.get(t, {}) and by_type[t][name] < recall - 0.2
    }
    if not lagging:
        return None
    worst = ", ".join(f"{t} {x:.2f}" for t, x in sorted(lagging.items()))
    return Diagnosis(
        "multi-passage-retrieval",
        f"questions needing several passages lag behind ({worst} vs {recall:.2f} overall)",
        "retrieval brings back one relevant passage but not the second one",
        "retrieve more contexts (larger k), decompose the question into sub-queries, or add a reranker",
    )


@rule("everything-low", RECALL, PRECISION, ANSWER)
def _everything_low(v: list[float], s: RunSummary) -> Diagnosis | None:
    if all(x < VERY_LOW for x in v):
        return Diagnosis(
            "everything-low",
            f"retrieval and answers are all poor (every one < {VERY_LOW})",
            "the pipeline as a whole does not fit this knowledge base",
            "redesign: revisit document parsing and chunking, the retriever and the prompt together",
            severity="critical",
        )
    return None


def diagnose(summary: RunSummary) -> list[Diagnosis]:
    """The rules that fire on ``summary``, critical ones first. A rule with an unmeasured input is skipped."""
    out: list[Diagnosis] = []
    for r in _RULES:
        picked = [measured(summary, names) for names in r.inputs]
        if any(p is None for p in picked):
            continue
        values = [p[1] for p in picked if p is not None]
        found = r.fn(values, summary)
        if found is not None:
            inputs = {p[0]: p[1] for p in picked if p is not None}
            finding = f"{found.finding} [{_fmt(inputs)}]"
            out.append(Diagnosis(found.rule, finding, found.cause, found.advice, inputs, found.severity))
    return sorted(out, key=lambda d: d.severity != "critical")


def skipped_rules(summary: RunSummary) -> list[str]:
    """Rules that could not run, with the inputs the run did not measure (shown in the report)."""
    out = []
    nothing_answered = summary.n_failed > 0 and not answered_view(summary)[0]
    for r in _RULES:
        missing = [" or ".join(names) for names in r.inputs if measured(summary, names) is None]
        if missing:
            why = " (over answered questions: none)" if nothing_answered else ""
            out.append(f"{r.name}: needs {'; '.join(missing)}{why}")
    return out
