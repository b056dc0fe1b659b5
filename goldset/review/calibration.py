"""Judge calibration (``goldset judge calibrate``): the filters' groundedness judge against the experts' decisions.

The expert-reviewed pairs are labelled data. Each one gets an expert label, "grounded" or "not grounded" (what
the groundedness check *should* say of it), and the judge's label (what the check says: the filters' own judge,
prompt, client, journal, concurrency and cost accounting: :func:`goldset.filters.groundedness.judge_many`); the
two are compared overall, per language and per question type (accuracy, Cohen's kappa, the 2x2 table), and the
result is written to the workspace's ``manifest.json``, so the next release carries it.

**The expert label** comes from the decision that stands for the pair (several annotators: the resolved one,
see :data:`goldset.review.decisions.RULE`; a later decision made outside Label Studio wins, as in ``apply``) and
the review criterion that speaks to groundedness: ``review.calibration.criterion`` (``answer_supported``, "Answer
is fully supported by the document") for answerable pairs, ``review.calibration.unanswerable_criterion``
(``type_right``, whose failure for an unanswerable pair is "the documents do answer it") for unanswerable ones,
whose check is inverted. The guidelines ask reviewers to tick every criterion that holds for the pair *as shown*,
before choosing a verdict, and say that accept means every criterion holds. So, the first rule that applies:

``ticked``      the criterion is ticked                                                        -> grounded
``unticked``    other criteria are ticked but not this one, and the verdict is reject or edit -> not grounded
``accepted``    no criterion ticked, verdict accept (accept means every criterion holds)       -> grounded

and the pair is left out (counted under its reason) when the decision does not say: ``accepted_unticked`` (an
accept with this criterion left empty while others are ticked contradicts itself), ``rejected_no_criteria`` (a
reject without the checklist: the reason might be anything), ``edited_no_criteria``. Pairs are also left out when
they went ``stale`` or ``retired`` since (their evidence changed: the judge would read other text than the expert
did), when an evidence chunk is not in the KB (``no_evidence``), and when a judge call failed (``judge_failed``,
retried on the next run). Comments are not read (free text, any language).

**The text judged** is the text the expert was shown: for a pair an expert edited, the text before the first
review edit (:func:`goldset.review.apply.pre_review_text`), since the criteria describe that text.

**Repeats** (``samples`` > 1): repeat 0 is the filters' very call (seed unset: a pair the filters already judged
on the same text costs nothing); repeat ``r`` sends ``seed=r``, which is part of the request and of its journal
key, so every repeat is a real request once and re-running the calibration costs no call. Every repeat is scored
on the same pairs (a pair with a failed call in any repeat is left out); the headline figures are repeat 0's.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.context import Context
from goldset.errors import ConfigError, InputError, RunFailed, UsageError
from goldset.progress import Progress, ProgressCallback
from goldset.schema import PairStatus, QAPair, QuestionType, ReviewDecision
from goldset.schema.manifest import (
    GROUNDED,
    NOT_GROUNDED,
    JudgeAgreement,
    JudgeCalibration,
    JudgeVariance,
    review_fingerprint,
)

if TYPE_CHECKING:
    from goldset.review.settings import CalibrationSettings
    from goldset.workspace import Workspace, WorkspaceLike

#: How a pair got its expert label (the keys stored in ``JudgeCalibration.rules``).
RULES = {
    "ticked": "the groundedness criterion is ticked -> grounded",
    "unticked": "other criteria ticked but not the groundedness one, verdict reject or edit -> not grounded",
    "accepted": "accepted with no criterion ticked (accept means every criterion holds) -> grounded",
}
#: Why a reviewed pair is not in the figures (the keys stored in ``JudgeCalibration.left_out``).
LEFT_OUT = {
    "stale": "stale or retired since review: its evidence changed, the judge would read other text",
    "accepted_unticked": "accepted with the groundedness criterion left unticked while others are ticked "
    "(contradictory)",
    "rejected_no_criteria": "rejected without ticking any criterion: the reason is not known",
    "edited_no_criteria": "edited without ticking any criterion: whether the shown answer was supported is not known",
    "no_decision": "an outcome without any decision on record",
    "no_evidence": "an evidence chunk is not in the KB: the judge cannot read what the expert read",
    "judge_failed": "a judge call failed (re-run to retry it; failures are not cached)",
}


@dataclass(frozen=True)
class ExpertLabel:
    """One reviewed pair's expert label (None: left out, ``rule`` then says why) and the decision it came from."""

    pair_id: str
    label: str | None
    rule: str
    decision: ReviewDecision | None = None


def deciding_decision(pair: QAPair) -> ReviewDecision | None:
    """The decision that stands for ``pair``, as ``review pull`` applied it: the resolution of its Label Studio
    decisions, unless a decision from elsewhere is later than all of them."""
    from goldset.review.decisions import SOURCE_PREFIX, resolve

    history = sorted(pair.review.decisions, key=lambda d: (d.at, d.source))
    if not history:
        return None
    ls = [d for d in history if d.source.startswith(SOURCE_PREFIX)]
    if not ls:
        return history[-1]
    newest = max(d.at for d in ls)
    later = [d for d in history if not d.source.startswith(SOURCE_PREFIX) and d.at > newest]
    return later[-1] if later else resolve(ls).decision


def expert_label(pair: QAPair, settings: CalibrationSettings) -> ExpertLabel:
    """The expert's groundedness label of a reviewed pair by the rules of the module docstring."""
    if pair.status in (PairStatus.stale, PairStatus.retired):
        return ExpertLabel(pair.id, None, "stale")
    decision = deciding_decision(pair)
    if decision is None:
        return ExpertLabel(pair.id, None, "no_decision")
    unanswerable = pair.question_type == QuestionType.unanswerable
    criterion = settings.unanswerable_criterion if unanswerable else settings.criterion
    if criterion in decision.criteria:
        return ExpertLabel(pair.id, GROUNDED, "ticked", decision)
    if decision.criteria:
        if decision.verdict == "accept":
            return ExpertLabel(pair.id, None, "accepted_unticked", decision)
        return ExpertLabel(pair.id, NOT_GROUNDED, "unticked", decision)
    if decision.verdict == "accept":
        return ExpertLabel(pair.id, GROUNDED, "accepted", decision)
    return ExpertLabel(pair.id, None, "rejected_no_criteria" if decision.verdict == "reject" else "edited_no_criteria",
                       decision)  # fmt: skip


def shown_pair(pair: QAPair) -> QAPair:
    """``pair`` with the text its reviewer was shown (before the first review edit)."""
    from goldset.review.apply import pre_review_text

    question, answer = pre_review_text(pair)
    if (question, answer) == (pair.question, pair.answer):
        return pair
    return pair.model_copy(update={"question": question, "answer": answer})


def agreement_of(expert: Sequence[str], judge: Sequence[str]) -> JudgeAgreement:
    """Accuracy, Cohen's kappa and the 2x2 table of two label lists over the same pairs."""
    from goldset.review.decisions import cohen_kappa

    if len(expert) != len(judge):
        raise ValueError("agreement_of: the expert and the judge must label the same pairs")
    n = len(expert)
    cells = Counter(zip(expert, judge, strict=True))
    return JudgeAgreement(
        pairs=n,
        accuracy=sum(1 for e, j in zip(expert, judge, strict=True) if e == j) / n if n else None,
        kappa=cohen_kappa(expert, judge) if n else None,
        both_grounded=cells[(GROUNDED, GROUNDED)],
        false_alarms=cells[(GROUNDED, NOT_GROUNDED)],
        missed=cells[(NOT_GROUNDED, GROUNDED)],
        both_not_grounded=cells[(NOT_GROUNDED, NOT_GROUNDED)],
    )


def variance_of(ids: Sequence[str], expert: Sequence[str], repeats: Sequence[Sequence[str]]) -> JudgeVariance:
    """The spread of accuracy and kappa over the repeats, and each pair's flip rate (the share of repeats that
    gave its minority label)."""
    per = [agreement_of(expert, labels) for labels in repeats]
    flips: dict[str, float] = {}
    total = 0.0
    for i, pid in enumerate(ids):
        counts = Counter(labels[i] for labels in repeats)
        rate = (len(repeats) - max(counts.values())) / len(repeats)
        total += rate
        if rate:
            flips[pid] = rate
    return JudgeVariance(
        samples=len(repeats),
        accuracy=[a.accuracy for a in per],
        kappa=[a.kappa for a in per],
        unstable_pairs=len(flips),
        mean_flip_rate=total / len(ids) if ids else 0.0,
        flip_rates=dict(sorted(flips.items())),
    )


@dataclass
class CalibrationReport:
    """What ``calibrate`` did: the record it wrote to the manifest, the LLM counters and the failed calls."""

    calibration: JudgeCalibration
    manifest_path: Path
    llm: dict[str, Any] = field(default_factory=dict)
    judge_errors: list[str] = field(default_factory=list)
    labels: list[ExpertLabel] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # warnings: the judge is the model that wrote the pairs

    @property
    def warning(self) -> str | None:
        """What the calibration says against the judge (below min_kappa, too few pairs, unmeasurable), if anything."""
        return self.calibration.warning()


def _check_criteria(ws: Workspace, config_file: str, settings: CalibrationSettings) -> None:
    """The criteria the labels rest on are values of the labeling config's criteria control (when there is one)."""
    from goldset.review import config as label_config

    path = ws.root / config_file
    if not path.is_file():
        return
    control = label_config.load(path).controls.get(label_config.CRITERIA)
    if control is None:
        raise ConfigError(
            f"{path}: no '{label_config.CRITERIA}' control, so no decision says whether an answer is supported; "
            "judge calibration needs the review criteria"
        )
    for name, value in (("criterion", settings.criterion), ("unanswerable_criterion", settings.unanswerable_criterion)):
        if value not in control.values:
            raise ConfigError(
                f"review.calibration.{name}: {value!r} is not a value of the criteria control in {path} "
                f"(values: {', '.join(control.values)})"
            )


def calibrate(
    ws: WorkspaceLike | Context = None, *, samples: int = 1, progress: ProgressCallback | None = None
) -> CalibrationReport:
    """Judge the expert-reviewed pairs with the filters' groundedness judge ``samples`` times, compare with the
    experts' labels and store the result in the workspace's manifest (see the module docstring). Raises
    :class:`InputError` when no reviewed pair gives a label, :class:`EndpointError` without a judge endpoint (both
    before any call), :class:`RunFailed` when every judge call failed (nothing written then)."""
    import asyncio

    from goldset.dataset import same_model_notes
    from goldset.filters import groundedness
    from goldset.filters.settings import FilterSettings
    from goldset.llm import resolve_endpoint, session
    from goldset.prompts import load_prompt
    from goldset.review.settings import ReviewSettings

    if samples < 1:
        raise UsageError(f"samples: judge every pair at least once (got {samples})")
    ctx = Context.of(ws)
    workspace = ctx.workspace
    review, filters = ctx.section(ReviewSettings), ctx.section(FilterSettings)
    cal = review.calibration
    _check_criteria(workspace, review.label_studio.config_file, cal)

    # 1. The expert labels (no call yet): every problem of the input is reported before the endpoint is touched.
    data = ctx.data
    pairs = data.require_pairs("no pairs yet; run `goldset generate`, `goldset filter` and review")
    reviewed = [p for p in pairs if p.review.outcome is not None]
    if not reviewed:
        raise InputError(
            f"{data.pairs_path}: no pair has an expert decision yet, so there is nothing to calibrate the judge "
            "against; review a sample first (goldset review sample, push, pull)"
        )
    chunks = data.chunk_sources().kb
    labels: list[ExpertLabel] = []
    for p in reviewed:
        lab = expert_label(p, cal)
        missing = p.question_type != QuestionType.unanswerable and (
            not p.evidence or any(cid not in chunks for cid in p.chunk_ids)
        )
        if lab.label is not None and missing:
            lab = ExpertLabel(p.id, None, "no_evidence", lab.decision)
        labels.append(lab)
    usable = [lab for lab in labels if lab.label is not None]
    if not usable:
        why = ", ".join(f"{k} {v}" for k, v in sorted(Counter(lab.rule for lab in labels).items()))
        raise InputError(
            f"{data.pairs_path}: {len(reviewed)} reviewed pairs, but no decision says whether the answer is "
            f"supported ({why}); reviewers tick the criterion {cal.criterion!r} (see labeling/guidelines)"
        )

    manifest = data.manifest_or_built(pairs)  # read before any call

    # 2. The judge: the endpoint and prompt of the filters (an EndpointError here, before any call).
    endpoint = resolve_endpoint(ctx, "judge")
    prompt = load_prompt(groundedness.PROMPT_ID, workspace.prompts_dir)
    g_settings = filters.for_check(groundedness.SPEC)
    by_id = {p.id: p for p in reviewed}
    targets = [shown_pair(by_id[lab.pair_id]) for lab in usable]
    kb = sorted(chunks.values(), key=lambda c: c.id)
    total = len(targets) * samples
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(Progress("judge", done, total))

    async def run() -> tuple[list[list[groundedness.GroundednessOutcome]], dict[str, Any]]:
        async with session(workspace, endpoint) as client:
            # The repeats together (each bounds its own calls in progress): the pool stays full between them.
            outcomes = await asyncio.gather(*(
                groundedness.judge_many(
                    targets, chunks, g_settings, client, prompt, kb_chunks=kb,
                    kb_context_chunks=filters.kb_context_chunks, on_done=tick,
                    seed=None if r == 0 else r,
                )
                for r in range(samples)
            ))  # fmt: skip
            return list(outcomes), client.stats.as_dict()

    repeats, llm = asyncio.run(run())

    # 3. The figures, on the pairs every repeat judged.
    errors: list[str] = []
    failed: set[str] = set()
    verdicts: list[dict[str, str]] = []
    for r, outcomes in enumerate(repeats):
        got: dict[str, str] = {}
        for o in outcomes:
            if o.check is None:
                failed.add(o.pair_id)
                errors.append(f"{o.pair_id} (sample {r + 1}): {o.error}")
            else:
                got[o.pair_id] = GROUNDED if o.check.passed else NOT_GROUNDED
        verdicts.append(got)
    labels = [ExpertLabel(lab.pair_id, None, "judge_failed", lab.decision) if lab.pair_id in failed else lab
              for lab in labels]  # fmt: skip
    judged = [lab for lab in labels if lab.label is not None]
    if not judged:
        raise RunFailed(f"every judge call failed, nothing written (e.g. {errors[0]})")
    ids = [lab.pair_id for lab in judged]
    expert = [str(lab.label) for lab in judged]
    first = [verdicts[0][pid] for pid in ids]
    groups: dict[str, dict[str, list[int]]] = {"language": defaultdict(list), "type": defaultdict(list)}
    for i, pid in enumerate(ids):
        groups["language"][by_id[pid].language].append(i)
        groups["type"][by_id[pid].question_type.value].append(i)

    def sub(idx: list[int]) -> JudgeAgreement:
        return agreement_of([expert[i] for i in idx], [first[i] for i in idx])

    pairs_labels = zip(ids, expert, first, strict=True)
    disagreements = {pid: "false alarm" if e == GROUNDED else "missed" for pid, e, j in pairs_labels if e != j}
    record = JudgeCalibration(
        check=groundedness.NAME,
        model=endpoint.model,
        endpoint=endpoint.name,
        prompt_id=groundedness.PROMPT_ID,
        prompt_hash=prompt.hash,
        temperature=endpoint.settings.temperature,
        samples=samples,
        min_kappa=cal.min_kappa,
        min_pairs=cal.min_pairs,
        reviewed=len(reviewed),
        labelled=sum(1 for lab in labels if lab.label is not None or lab.rule in ("no_evidence", "judge_failed")),
        rules=dict(sorted(Counter(lab.rule for lab in judged).items())),
        left_out=dict(sorted(Counter(lab.rule for lab in labels if lab.label is None).items())),
        judged_pre_edit=sum(1 for pid in ids if shown_pair(by_id[pid]) is not by_id[pid]),
        overall=agreement_of(expert, first),
        by_language={k: sub(v) for k, v in sorted(groups["language"].items())},
        by_question_type={k: sub(v) for k, v in sorted(groups["type"].items())},
        variance=variance_of(ids, expert, [[v[pid] for pid in ids] for v in verdicts]) if samples > 1 else None,
        disagreements=disagreements,
        review_fingerprint=review_fingerprint(pairs),
    )
    data.write_manifest(manifest.model_copy(update={"calibration": record}))
    return CalibrationReport(
        calibration=record, manifest_path=data.manifest_path, llm=llm, judge_errors=errors, labels=labels,
        notes=same_model_notes(endpoint.model, reviewed),
    )  # fmt: skip
