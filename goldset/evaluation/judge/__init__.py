"""The LLM judge of a run's answers: faithfulness, hallucination, completeness, relevancy, context relevance and
refusals, in at most three structured calls per sample.

One module per concern: ``claims`` (claim verdicts against the contexts: faithfulness, hallucination, context
utilization, contradictions of the reference), ``completeness`` (the reference's claims or key points the answer
covers; readings of ambiguous questions), ``relevancy`` (answer relevancy, rated and by reverse questions),
``context_relevance`` (each retrieved context, reference-free), ``refusals`` (declined, answered or hedged);
``calls`` (the three calls that carry them, their prompts and reply schemas), ``runner`` (planning and running the
judge over a run), ``estimate`` (``goldset eval --dry-run``), ``settings`` (``eval.judge``). The metrics themselves
are pure functions in :mod:`goldset.evaluation.metrics.judged`, registered with the other metrics.

Importing this package is cheap; the LLM client is imported when the judge runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset._lazy import lazy_exports

_EXPORTS = {
    "JudgeSettings": "goldset.evaluation.judge.settings",
    "JudgePlan": "goldset.evaluation.judge.runner",
    "prepare_judge": "goldset.evaluation.judge.runner",
    "judge_run": "goldset.evaluation.judge.runner",
    "JudgeEstimate": "goldset.evaluation.judge.estimate",
    "estimate_judging": "goldset.evaluation.judge.estimate",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the same names, for type checkers
    from goldset.evaluation.judge.estimate import JudgeEstimate, estimate_judging
    from goldset.evaluation.judge.runner import JudgePlan, judge_run, prepare_judge
    from goldset.evaluation.judge.settings import JudgeSettings
