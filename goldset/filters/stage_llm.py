"""Pipeline stage 3: the LLM. The groundedness judge on pairs whose verdict is stale, then (``repair=True``) the
paraphrase repair of answers that fail only the verbatim check, re-checked before a rewrite is kept.

One client and one call journal serve both, so the judge's verdicts on rewritten answers are cached like any
other call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from goldset.filters import closed_book, groundedness
from goldset.filters import repair as repair_mod
from goldset.filters.incremental import current, input_hash, settings_hash, with_check
from goldset.filters.report import CheckCounts, FilterReport
from goldset.filters.run_state import FilterRun
from goldset.filters.stage_pair_checks import run_pair_checks
from goldset.filters.status import JUDGED, generation_rejects, owned_by_filters, rejected_before_judges, rejecting
from goldset.schema import CheckResult, Chunk, QAPair

if TYPE_CHECKING:
    from goldset.llm import Endpoint, LLMClient
    from goldset.prompts import Prompt


@dataclass
class LLMPlan:
    """What the LLM stage will do, resolved before any check runs (a missing endpoint is an error up front)."""

    endpoint: Endpoint
    judge_prompt: Prompt | None
    repair_prompt: Prompt | None
    #: The closed-book check's endpoint and prompts (its judge is ``endpoint``), None when it does not run.
    closed_book: closed_book.Plan | None = None


def groundedness_input(pair: QAPair, chunks: Mapping[str, Chunk], related: groundedness.RelatedChunks) -> str:
    """What the judge read: the pair and its evidence chunks; for unanswerable pairs also the other chunks it is
    shown (those it was generated from and the related KB chunks), by id and content. A change elsewhere in the
    KB leaves the verdict current."""
    extra = None
    if pair.question_type.value == "unanswerable":
        ids = groundedness.source_ids(pair, groundedness.related_for(pair, related))
        extra = {"sources": [(cid, chunks[cid].content_hash if cid in chunks else None) for cid in ids]}
    return input_hash(groundedness.SPEC, pair, chunks, extra)


async def run_llm(run: FilterRun, plan: LLMPlan, live: list[QAPair], *, repair: bool) -> None:
    """Judge (when the plan has a judge prompt) and repair (when asked) the pairs of ``live``, updated in place."""
    from goldset.llm import session

    async with session(run.ws, plan.endpoint) as client:
        stage = _LLMStage(run, plan, client)
        if plan.judge_prompt is not None:
            await stage.judge_stale(live)
        if repair and plan.repair_prompt is not None:
            await stage.repair(live, plan.repair_prompt)
        run.report.llm = client.stats.as_dict()
        if plan.closed_book is not None:  # last: its calls are for pairs every other check let through
            from goldset.filters.stage_duplicates import add_stats

            async with session(run.ws, plan.closed_book.answer_endpoint) as answerer:
                await stage.closed_book(live, plan.closed_book, answerer)
            run.report.llm = add_stats(client.stats.as_dict(), answerer.stats.as_dict())


class _LLMStage:
    """The judge and the repair over one client: the settings hash of the judge's verdicts is computed once."""

    def __init__(self, run: FilterRun, plan: LLMPlan, client: LLMClient) -> None:
        self.run = run
        self.plan = plan
        self.client = client
        self.settings = run.settings_of(groundedness.SPEC)
        prompt_hash = plan.judge_prompt.hash if plan.judge_prompt is not None else None
        extra = {"model": plan.endpoint.model, "prompt": prompt_hash, "kb_context": run.settings.kb_context_chunks}
        self.g_hash = settings_hash(groundedness.SPEC, self.settings, extra)

    def g_input(self, pair: QAPair) -> str:
        """The judge's input hash of ``pair``."""
        return groundedness_input(pair, self.run.chunks, self.run.related)

    def stamped(self, pair: QAPair, verdict: CheckResult) -> QAPair:
        """``pair`` with the judge's verdict, stamped with what it was made on and the check's severity."""
        upd = {"settings_hash": self.g_hash, "input_hash": self.g_input(pair), "severity": self.settings.severity}
        return with_check(pair, groundedness.NAME, verdict.model_copy(update=upd))

    async def judge(self, targets: Sequence[QAPair]) -> dict[str, CheckResult]:
        """The judge's verdict per pair id; a failed call is reported and leaves its pair out (judged next run)."""
        if self.plan.judge_prompt is None:
            return {}
        done = 0

        def tick() -> None:
            nonlocal done
            done += 1
            self.run.tell("judge", done, len(targets))

        outcomes = await groundedness.judge_many(
            targets, self.run.chunks, self.settings, self.client, self.plan.judge_prompt,
            related=self.run.related, on_done=tick,
        )  # fmt: skip
        got: dict[str, CheckResult] = {}
        verdicts = inconsistent = 0
        for o in outcomes:
            if o.check is None:
                self.run.report.judge_errors.append(f"{o.pair_id}: {o.error}")
            else:
                got[o.pair_id] = o.check
            verdicts += o.check is not None or o.inconsistent
            inconsistent += o.inconsistent
        self.run.report.count_consistency(groundedness.NAME, verdicts, inconsistent)
        return got

    async def judge_stale(self, live: list[QAPair]) -> None:
        """Judge every pair whose verdict is missing or was made on other text, settings, model or prompt, except
        pairs a cheaper verdict already rejects (:func:`~goldset.filters.status.rejected_before_judges`; unless
        ``filter.judge_rejected``): the judge's call would change nothing about them."""
        todo: list[int] = []
        cheaper = [n for n in self.run.names if n != groundedness.NAME]
        for idx, p in enumerate(live):
            if p.status not in JUDGED:  # accepted and stale pairs: review owns them (refresh re-judges them)
                continue
            if current(p, groundedness.NAME, self.g_hash, self.g_input(p)) is not None:
                self.run.report.reuse(groundedness.NAME)
            elif not self.run.settings.judge_rejected and rejected_before_judges(p, cheaper):
                self.run.report.not_judged[groundedness.NAME] = self.run.report.not_judged.get(groundedness.NAME, 0) + 1
            else:
                todo.append(idx)
        got = await self.judge([live[i] for i in todo])
        for idx in todo:
            res = got.get(live[idx].id)
            if res is not None:
                live[idx] = self.stamped(live[idx], res)
                self.run.report.computed += 1

    async def repair(self, live: list[QAPair], prompt: Prompt) -> None:
        """Rewrite answers that fail only the verbatim check, re-check them, keep rewrites that no longer copy.

        "Only": no other check rejects the pair (flags do not count) and generation did not reject it (a rewrite
        would clear generation's verdict without curing what it found).
        """
        names, report = self.run.names, self.run.report
        targets = [
            idx for idx, p in enumerate(live)
            if owned_by_filters(p) and rejecting(p, names) == ["verbatim"] and not generation_rejects(p)
        ]  # fmt: skip
        if not targets:
            return
        answers = await repair_mod.rewrite_many([live[i] for i in targets], self.run.chunks, self.client, prompt)
        checked: list[QAPair] = []
        for idx in targets:
            got = answers[live[idx].id]
            if isinstance(got, Exception):
                report.repair_failed[live[idx].id] = str(got)
                continue
            checked.append(repair_mod.rewritten(live[idx], got, self.plan.endpoint.model))
        if not checked:
            return
        # The re-check counts apart: only the fresh verdicts of kept rewrites count as computed by this run.
        sub = dataclasses.replace(self.run, report=FilterReport(per_check={n: CheckCounts() for n in names}),
                                  progress=None)  # fmt: skip
        run_pair_checks(sub, checked)
        verdicts = await self.judge(checked)
        checked = [self.stamped(p, verdicts[p.id]) if p.id in verdicts else p for p in checked]
        position = {p.id: i for i, p in enumerate(live)}
        for p in checked:
            failed = rejecting(p, names)
            if groundedness.NAME in names and p.id not in verdicts:
                failed.append(groundedness.NAME)  # the judge could not confirm the rewrite (its verdict is stale)
            if failed:
                report.repair_failed[p.id] = f"rewrite still fails {', '.join(failed)}; original kept"
                continue
            original = live[position[p.id]]
            live[position[p.id]] = p
            report.repaired.append(p.id)
            report.computed += sum(1 for n, c in p.checks.items() if c is not original.checks.get(n))

    async def closed_book(self, live: list[QAPair], cb: closed_book.Plan, answerer: LLMClient) -> None:
        """The closed-book check on every pair whose verdict is missing or stale, except pairs an earlier verdict
        (the groundedness judge's included) already rejects: no call is made about them."""
        spec, run = closed_book.SPEC, self.run
        st = run.settings_of(spec)
        s_hash = closed_book.check_settings_hash(st, cb, self.plan.endpoint.model)
        cheaper = [n for n in run.names if n != spec.name]
        todo: list[int] = []
        for idx, p in enumerate(live):
            if p.status not in JUDGED:
                continue
            if current(p, spec.name, s_hash, input_hash(spec, p, run.chunks)) is not None:
                run.report.reuse(spec.name)
            elif not run.settings.judge_rejected and rejected_before_judges(p, cheaper):
                run.report.not_judged[spec.name] = run.report.not_judged.get(spec.name, 0) + 1
            else:
                todo.append(idx)
        done = 0

        def tick() -> None:
            nonlocal done
            done += 1
            run.tell("closed book", done, len(todo))

        outcomes = await closed_book.check_many([live[i] for i in todo], answerer, self.client, cb, on_done=tick)
        verdicts = inconsistent = 0
        for idx, o in zip(todo, outcomes, strict=True):
            verdicts += o.judged
            inconsistent += o.inconsistent
            if o.check is None:
                run.report.judge_errors.append(f"{o.pair_id}: {o.error}")
                continue
            upd = {"settings_hash": s_hash, "input_hash": input_hash(spec, live[idx], run.chunks),
                   "severity": st.severity}  # fmt: skip
            live[idx] = with_check(live[idx], spec.name, o.check.model_copy(update=upd))
            run.report.computed += 1
        if verdicts:
            run.report.count_consistency(spec.name, verdicts, inconsistent)
