"""``goldset eval --dry-run``: how many judge calls a run needs, how many the journal already holds, what the rest
would cost. Nothing is called: no judge, no system, no embeddings.

For a run file the estimate renders every call the judge would make, exactly as it would make it, and looks its
key up in the call journal: the count of calls is exact, and so is the count the journal answers (a re-scored run
shows every call cached and a cost of 0). Prompt tokens are the offline estimate of the rendered messages; reply
tokens are estimated from the lengths of the answer and the reference (claims and points restate them). For a
target or an endpoint the answers do not exist before the system runs: each pair is estimated as if the system
answered with the reference answer and retrieved the pair's evidence chunks, and the notes say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.evaluation.judge.calls import SCHEMAS, JudgeItem, calls_for, make_item, render

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.dataset import Dataset
    from goldset.evaluation.judge.runner import JudgePlan
    from goldset.evaluation.settings import EvalSettings
    from goldset.llm import CallJournal
    from goldset.schema import QAPair, RunSample
    from goldset.workspace import WorkspaceLike

#: Reply tokens of a call beyond what it restates (JSON keys, verdicts, reasons).
_REPLY_OVERHEAD = {"claims": 30, "coverage": 20, "relevance": 60}
_PER_CONTEXT_VERDICT = 12
_PER_REVERSE_QUESTION = 25


@dataclass
class JudgeEstimate:
    """What judging a run would take. ``cost_usd`` is None when the judge model has no price configured."""

    enabled: bool
    reason: str = ""  # why the judge would not run, when it would not
    model: str | None = None
    endpoint: str | None = None
    n_samples: int = 0
    n_judged: int = 0  # samples the judge would read (failed samples are not judged)
    calls: int = 0
    cached: int = 0  # calls the journal already holds (sent: calls - cached)
    max_calls_per_sample: int = 0
    calls_by_kind: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0  # of the calls to send
    completion_tokens: int = 0
    cost_usd: float | None = None
    embedding_texts: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def to_send(self) -> int:
        """Calls the journal does not hold."""
        return self.calls - self.cached


def _reply_tokens(kind: str, item: JudgeItem, n_questions: int) -> int:
    from goldset.text import estimate_llm_tokens

    if kind == "claims":  # every claim restated, with a quote of about its length
        return 2 * estimate_llm_tokens(item.answer) + _REPLY_OVERHEAD[kind]
    if kind == "coverage":
        return estimate_llm_tokens(item.reference) + _REPLY_OVERHEAD[kind]
    return _REPLY_OVERHEAD[kind] + _PER_CONTEXT_VERDICT * len(item.contexts) + _PER_REVERSE_QUESTION * n_questions


def estimate_items(plan: JudgePlan, items: list[JudgeItem], journal: CallJournal | None) -> JudgeEstimate:
    """Count, look up and price the calls of ``items`` (already-answered samples only)."""
    from goldset.hashing import canonical_json
    from goldset.llm import Usage, cost_usd
    from goldset.llm.journal import call_key_from_json
    from goldset.llm.structured import schema_json_text
    from goldset.llm.usage import estimate_tokens

    out = JudgeEstimate(enabled=True, model=plan.endpoint.model, endpoint=plan.endpoint.name, n_judged=len(items))
    params = plan.call_params()
    for item in items:
        kinds = calls_for(item, plan.settings.calls)
        out.max_calls_per_sample = max(out.max_calls_per_sample, len(kinds))
        for kind in kinds:
            out.calls += 1
            out.calls_by_kind[kind] = out.calls_by_kind.get(kind, 0) + 1
            messages = render(kind, item, plan.prompts[kind], plan.settings, plan.n_questions)
            schema, _ = SCHEMAS[kind]
            key = call_key_from_json(plan.endpoint.model, canonical_json(messages), schema_json_text(schema), params)
            if journal is not None and journal.get(key) is not None:
                out.cached += 1
                continue
            out.prompt_tokens += estimate_tokens(messages)
            out.completion_tokens += _reply_tokens(kind, item, plan.n_questions)
        if plan.embeddings and item.answerable and "relevance" in kinds:
            out.embedding_texts += 1 + plan.n_questions
    usage = Usage(prompt_tokens=out.prompt_tokens, completion_tokens=out.completion_tokens)
    out.cost_usd = cost_usd(plan.endpoint, usage)
    if out.cost_usd is None:
        out.notes.append(
            f"no price for {plan.endpoint.model}: set llm.prices.{plan.endpoint.model} or the endpoint's price_* "
            "settings to see a cost"
        )
    return out


def estimate_from_journal(plan: JudgePlan, items: list[JudgeItem], journal_path: Path) -> JudgeEstimate:
    """:func:`estimate_items` with the call journal at ``journal_path`` when there is one (read only: a dry run
    creates no journal)."""
    from goldset.llm import CallJournal

    journal = CallJournal(journal_path) if journal_path.is_file() else None
    try:
        return estimate_items(plan, items, journal)
    finally:
        if journal is not None:
            journal.close()


def _stand_in(pair: QAPair, data: Dataset) -> RunSample:
    """What a system that answers with the reference and retrieves the evidence would send (for targets)."""
    from goldset.schema import RetrievedContext, RunSample

    texts = [data.chunks[c].text for c in pair.chunk_ids if c in data.chunks]
    return RunSample(pair_id=pair.id, answer=pair.answer, contexts=[RetrievedContext(text=t) for t in texts])


def estimate_judging(
    dataset: str | Path | Dataset,
    *,
    run: str | Path | None = None,
    ws: WorkspaceLike | Context = None,
    settings: EvalSettings | None = None,
    sample: int | None = None,
    seed: int = 0,
    judge: bool | None = None,
    run_file: str | Path | None = None,
) -> JudgeEstimate:
    """The judge's calls and cost for evaluating the run file ``run`` (exact) or, without one, a system not yet run
    (estimated with stand-in answers), against ``dataset``; the same choice of pairs as :func:`goldset.evaluate`.
    Calls nothing; opens the call journal only if it exists. ``run_file``: the old name of ``run`` (deprecated)."""
    from goldset.collector import paused_gc
    from goldset.context import Context
    from goldset.dataset import Dataset
    from goldset.evaluation import datasets
    from goldset.evaluation.judge.runner import prepare_judge
    from goldset.evaluation.run_files import read_run_file, renamed_run
    from goldset.evaluation.runs import judge_journal_path, runs_folder
    from goldset.evaluation.settings import EvalSettings

    run = renamed_run(run, run_file, "estimate_judging")
    ctx = Context.optional(ws)
    ws = ctx.ws
    if settings is None:
        settings = ctx.section(EvalSettings)
    journal_path = judge_journal_path(ws, runs_folder(ws, settings))
    plan = prepare_judge(ctx, settings, judge, journal_path)
    if plan is None:
        if judge is False:
            why = "--no-judge"
        elif settings.judge.enabled is False:
            why = "eval.judge.enabled is false"
        else:
            why = "no judge endpoint is configured (llm.judge, GOLDSET_JUDGE_MODEL or GOLDSET_MODEL)"
        return JudgeEstimate(enabled=False, reason=why)
    with paused_gc():
        data = dataset if isinstance(dataset, Dataset) else datasets.resolve_dataset(dataset, ctx)
    pairs, _ = datasets.pairs_to_evaluate(data, sample, seed)
    notes: list[str] = []
    samples: dict[str, Any]
    if run is not None:
        fingerprint = datasets.dataset_fingerprint(data)
        read = read_run_file(Path(run), data, fingerprint=fingerprint, questions={p.id: p.question for p in pairs})
        samples = read.samples
    else:
        samples = {p.id: _stand_in(p, data) for p in pairs}
        notes.append(
            "the system has not run yet: estimated as if it answered with the reference answers and retrieved the "
            "evidence chunks (real answers and contexts change the tokens, not the number of calls)"
        )
    items = [
        make_item(p, s, plan.settings) for p in pairs if (s := samples.get(p.id)) is not None and s.error is None
    ]
    out = estimate_from_journal(plan, items, journal_path)
    out.n_samples = len(pairs)
    out.notes = notes + out.notes
    return out
