"""`goldset filter` as a library call: read everything, validate, run the checks, record verdicts, write back.

Order of work: settings and check names are validated, the candidates file, chunks and ``--against`` pairs are
read (a malformed line stops the run before anything is written), the judge endpoint is resolved; only then are
checks run. Pair checks and the LLM judge are incremental: a verdict is reused when the check's settings hash
and the hash of what it read (pair fields + evidence chunk content hashes) are unchanged. Duplicates are a set
property and are recomputed every run, but a verdict is only replaced when it changed. Pairs in review's hands
(accepted, stale) get their checks recorded but keep their status; retired pairs are left alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldset.config import load_settings
from goldset.errors import ConfigError, InputError, UsageError
from goldset.filters import duplicates, groundedness, question_overlap
from goldset.filters import repair as repair_mod
from goldset.filters.base import CheckSettings, CheckSpec
from goldset.filters.registry import CHECKS
from goldset.filters.settings import FilterSettings
from goldset.hashing import hash_obj, short_hash
from goldset.progress import Progress, ProgressCallback
from goldset.schema import CheckResult, Chunk, PairStatus, QAPair

if TYPE_CHECKING:
    from goldset.llm import Endpoint
    from goldset.prompts import Prompt
    from goldset.workspace import Workspace

#: Statuses whose pass/reject the filters decide; review owns the others.
JUDGED = frozenset({PairStatus.candidate, PairStatus.passed, PairStatus.rejected})


@dataclass
class CheckCounts:
    passed: int = 0
    failed: int = 0
    reused: int = 0  # verdicts kept from an earlier run (unchanged input and settings)


@dataclass
class FailureExample:
    pair_id: str
    question: str
    reason: str


@dataclass
class FilterReport:
    """What one run did and found: counts per check and per question type, and examples of each failure."""

    n_pairs: int = 0
    n_judged: int = 0
    checks: list[str] = field(default_factory=list)
    per_check: dict[str, CheckCounts] = field(default_factory=dict)
    failures_by_type: dict[str, dict[str, int]] = field(default_factory=dict)
    status_by_type: dict[str, dict[str, int]] = field(default_factory=dict)
    status_counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[FailureExample]] = field(default_factory=dict)
    computed: int = 0
    reused: int = 0
    skipped_checks: dict[str, str] = field(default_factory=dict)
    duplicate_groups: int = 0
    judge_errors: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    repair_failed: dict[str, str] = field(default_factory=dict)
    written: bool = False
    llm: dict[str, Any] | None = None
    embedding: dict[str, Any] | None = None


def _settings_hash(spec: CheckSpec, settings: CheckSettings, extra: dict[str, Any] | None = None) -> str:
    return hash_obj({"v": spec.version, "s": settings.model_dump(exclude={"enabled"}), **(extra or {})})


def _field_hashes(pair: QAPair, chunks: dict[str, Chunk]) -> dict[str, str]:
    """One hash per pair field a check may read (and of its evidence chunks' content), computed once per pair;
    each check's input hash combines the ones it reads."""
    return {
        "question": short_hash(pair.question),
        "answer": short_hash(pair.answer),
        "question_type": pair.question_type.value,
        "evidence": hash_obj([e.model_dump() for e in pair.evidence]),
        "chunks": hash_obj([(cid, chunks[cid].content_hash if cid in chunks else None) for cid in pair.chunk_ids]),
    }


def _input_hash(
    spec: CheckSpec,
    pair: QAPair,
    chunks: dict[str, Chunk],
    extra: dict[str, Any] | None = None,
    fields: dict[str, str] | None = None,
) -> str:
    fields = fields if fields is not None else _field_hashes(pair, chunks)
    parts = [f"{name}={fields[name]}" for name in spec.reads]
    if spec.uses_chunks:
        parts.append(f"chunks={fields['chunks']}")
    parts.extend(f"{k}={v}" for k, v in sorted((extra or {}).items()))
    return short_hash("\x1f".join(parts))


def _current(pair: QAPair, name: str, s_hash: str, i_hash: str) -> CheckResult | None:
    old = pair.checks.get(name)
    if old is not None and old.settings_hash == s_hash and old.input_hash == i_hash:
        return old
    return None


def _same_verdict(a: CheckResult | None, b: CheckResult) -> bool:
    if a is None:
        return False
    return (a.passed, a.score, a.reason, a.duplicate_of) == (b.passed, b.score, b.reason, b.duplicate_of)


def load_chunks(ws: Workspace) -> dict[str, Chunk]:
    """Chunks of the dataset folder, overridden by the current KB snapshot's (the KB is the truth)."""
    from goldset.io import read_jsonl

    chunks: dict[str, Chunk] = {}
    for path in (ws.data_dir / "chunks.jsonl", ws.kb_dir / "chunks.jsonl"):
        if path.exists():
            chunks.update((c.id, c) for c in read_jsonl(path, Chunk))
    return chunks


def load_against(path: Path) -> list[QAPair]:
    """Pairs of a dataset folder (its pairs.jsonl) or of a pairs file, for cross-release duplicate checks."""
    from goldset.dataset import read_dataset
    from goldset.io import read_jsonl

    path = Path(path)
    if path.is_dir():
        return read_dataset(path).pairs
    if path.is_file():
        return read_jsonl(path, QAPair)
    raise InputError(f"{path}: --against needs a dataset folder or a pairs .jsonl file; it does not exist")


def resolve_checks(settings: FilterSettings, requested: Sequence[str] | None) -> list[str]:
    """Names to run: the requested ones (validated) or every enabled check; groundedness resolved later."""
    if requested:
        unknown = [n for n in requested if n not in CHECKS]
        if unknown:
            raise ConfigError(f"unknown check {unknown[0]!r} (--check); known checks: {', '.join(CHECKS)}")
        return [n for n in CHECKS if n in set(requested)]
    return [n for n in CHECKS if settings.for_check(n).enabled is not False]


@dataclass
class _LLMPlan:
    endpoint: Endpoint
    judge_prompt: Prompt | None
    repair_prompt: Prompt | None


def run_filters(
    ws: Workspace,
    *,
    checks: Sequence[str] | None = None,
    against: Path | None = None,
    repair: bool = False,
    use_llm: bool = True,
    progress: ProgressCallback | None = None,
) -> FilterReport:
    """Run the filter pipeline over the workspace's candidates file and write the verdicts back.

    ``checks``: names to run (default: every enabled check). ``against``: a dataset folder or pairs file whose
    questions count as already taken (the previous release). ``repair``: rewrite answers failing only the
    verbatim check (needs the LLM). ``use_llm=False`` turns the judge off.
    """
    from goldset.llm import endpoint_configured, resolve_endpoint
    from goldset.prompts import load_prompt

    # 1. Settings and names: errors before any work.
    settings = load_settings(ws).filter
    names = resolve_checks(settings, checks)
    report = FilterReport()
    g_settings = settings.for_check(groundedness.NAME)
    if groundedness.NAME in names:
        explicit = bool(checks) or g_settings.enabled is True
        if not use_llm:
            names.remove(groundedness.NAME)
            report.skipped_checks[groundedness.NAME] = "skipped: --no-llm"
        elif not explicit and not endpoint_configured(ws, "judge"):
            names.remove(groundedness.NAME)
            report.skipped_checks[groundedness.NAME] = "skipped: no judge endpoint configured"
    if repair and not use_llm:
        raise UsageError("--repair needs the LLM to rewrite answers; drop --no-llm")
    if repair and "verbatim" not in names:
        raise UsageError("--repair rewrites answers that fail the verbatim check, which is not enabled; enable it")

    # 2. Read everything (a malformed line raises RecordError here, before anything is written).
    if not ws.pairs_path.exists():
        raise InputError(f"{ws.pairs_path}: no candidates file; run `goldset generate` first")
    from goldset.io import read_jsonl

    pairs = read_jsonl(ws.pairs_path, QAPair)
    chunks = load_chunks(ws)
    against_pairs = load_against(against) if against is not None else []

    # 3. The endpoint, if the judge or the repair will be used (EndpointError now, not halfway).
    plan: _LLMPlan | None = None
    if groundedness.NAME in names or repair:
        endpoint = resolve_endpoint(ws, "judge")
        plan = _LLMPlan(
            endpoint=endpoint,
            judge_prompt=load_prompt(groundedness.PROMPT_ID, ws.prompts_dir) if groundedness.NAME in names else None,
            repair_prompt=load_prompt(repair_mod.PROMPT_ID, ws.prompts_dir) if repair else None,
        )

    d_settings: duplicates.Settings = settings.for_check(duplicates.NAME)  # type: ignore[assignment]
    semantic_endpoint: Endpoint | None = None
    if duplicates.NAME in names and d_settings.semantic:
        if not use_llm:
            report.skipped_checks["duplicate (semantic)"] = "skipped: --no-llm; lexical duplicates only"
        else:
            semantic_endpoint = resolve_endpoint(ws, "judge")
            if not semantic_endpoint.embedding_model:
                raise ConfigError(
                    "filter.checks.duplicate.semantic needs an embedding model: set GOLDSET_EMBEDDING_MODEL or "
                    f"llm.endpoints.{semantic_endpoint.name}.embedding_model"
                )

    report.checks = list(names)
    report.n_pairs = len(pairs)
    before = {p.id: p.model_dump_json() for p in pairs}
    live = [p for p in pairs if p.status != PairStatus.retired]
    report.n_judged = sum(1 for p in live if p.status in JUDGED)
    for name in names:
        report.per_check[name] = CheckCounts()

    # 4. Pair checks (pure, fast).
    by_id = {p.id: p for p in pairs}
    _run_pair_checks(live, names, settings, chunks, report, progress)

    # 5. Duplicates across the set (and against the earlier release), lexical and optionally by embeddings.
    if duplicates.NAME in names:
        edges: list[tuple[int, int, float]] = []
        model = None
        if semantic_endpoint is not None:
            import asyncio

            model = semantic_endpoint.embedding_model
            edges = asyncio.run(_semantic_edges(ws, semantic_endpoint, live, against_pairs, settings, report))
        _run_duplicates(live, names, settings, against_pairs, report, edges, model)

    by_id.update((p.id, p) for p in live)

    # 6. The LLM: judge, then repair.
    if plan is not None:
        import asyncio

        updated = asyncio.run(_run_llm(ws, plan, live, names, settings, chunks, report, repair, progress))
        for p in updated:
            by_id[p.id] = p
        live = [by_id[p.id] for p in live]

    # 7. Status, counts, write-back.
    status_names = set(names) | {
        n for n in CHECKS if settings.for_check(n).enabled is True or (n != groundedness.NAME and n in names)
    }
    status_names -= set(report.skipped_checks)
    # A judge skipped this run (--no-llm, no endpoint) is not a judge disabled: an earlier verdict on the same
    # text still stands, so an unsupported answer does not become "passed" by running without the LLM.
    keep_judged = groundedness.NAME in report.skipped_checks and g_settings.enabled is not False
    kb_hash = _kb_hash(chunks)
    final: list[QAPair] = []
    for p in pairs:
        p = by_id[p.id]
        if p.status in JUDGED:
            names_p = set(status_names)
            old = p.checks.get(groundedness.NAME)
            if keep_judged and old is not None and old.input_hash == _groundedness_input(p, chunks, kb_hash):
                names_p.add(groundedness.NAME)
            p = p.model_copy(update={"status": _status(p, names_p)})
        final.append(p)
    _count(final, names, settings, report)
    if any(before[p.id] != p.model_dump_json() for p in final):
        from goldset.dataset import write_dataset

        write_dataset(ws.data_dir, final, chunks.values())
        report.written = True
    return report


def _kb_hash(chunks: dict[str, Chunk]) -> str:
    return hash_obj(sorted((c.id, c.content_hash) for c in chunks.values()))


def _groundedness_input(pair: QAPair, chunks: dict[str, Chunk], kb_hash: str) -> str:
    """What the judge read: the pair and its evidence, plus the whole KB for unanswerable pairs (their sources
    include the related chunks of the KB)."""
    extra = {"kb": kb_hash} if pair.question_type.value == "unanswerable" else None
    return _input_hash(CHECKS[groundedness.NAME], pair, chunks, extra)


def _status(pair: QAPair, names: set[str]) -> PairStatus:
    verdicts = [pair.checks.get(n) for n in names]
    if any(v is not None and not v.passed for v in verdicts):
        return PairStatus.rejected
    if all(v is not None for v in verdicts):
        return PairStatus.passed
    return PairStatus.candidate


def _set_check(pair: QAPair, name: str, res: CheckResult) -> QAPair:
    return pair.model_copy(update={"checks": {**pair.checks, name: res}})


def _run_pair_checks(
    live: list[QAPair],
    names: list[str],
    settings: FilterSettings,
    chunks: dict[str, Chunk],
    report: FilterReport,
    progress: ProgressCallback | None,
) -> None:
    """Run every pair-kind check on every live pair, reusing unchanged verdicts. Updates ``live`` in place."""
    specs = [CHECKS[n] for n in names if CHECKS[n].kind == "pair"]
    if not specs:
        return
    kb_hash = _kb_hash(chunks)
    qo_settings = settings.for_check(question_overlap.NAME)
    extra_for: dict[str, dict[str, Any]] = {
        question_overlap.NAME: {"kb": kb_hash} if getattr(qo_settings, "whole_kb", False) else {},
    }
    # Settings and their hashes once per check, field hashes once per pair.
    check_settings = {spec.name: settings.for_check(spec.name) for spec in specs}
    s_hashes = {spec.name: _settings_hash(spec, check_settings[spec.name]) for spec in specs}
    # What needs computing; the KB sentence index is built only if some question_overlap verdict is stale.
    todo: list[tuple[int, CheckSpec, str]] = []
    for idx, pair in enumerate(live):
        fields = _field_hashes(pair, chunks)
        for spec in specs:
            i_hash = _input_hash(spec, pair, chunks, extra_for.get(spec.name), fields)
            if _current(pair, spec.name, s_hashes[spec.name], i_hash) is not None:
                report.reused += 1
                report.per_check[spec.name].reused += 1
            else:
                todo.append((idx, spec, i_hash))
    kb_sentences = _kb_sentences_for(
        [live[i] for i, spec, _ in todo if spec.name == question_overlap.NAME], qo_settings, chunks
    )
    total = len(todo)
    new_checks: dict[int, dict[str, CheckResult]] = {}
    for done, (idx, spec, i_hash) in enumerate(todo, start=1):
        pair = live[idx]
        st = check_settings[spec.name]
        if spec.name == question_overlap.NAME:
            res = question_overlap.check(pair, chunks, st, kb_sentences.get(pair.id, ()))  # type: ignore[arg-type]
        else:
            res = spec.func(pair, chunks, st)  # type: ignore[misc]
        res.settings_hash, res.input_hash = s_hashes[spec.name], i_hash  # a fresh result of ours: set in place
        new_checks.setdefault(idx, {})[spec.name] = res
        report.computed += 1
        if progress is not None and (done % 500 == 0 or done == total):
            progress(Progress("checks", done, total))
    for idx, results in new_checks.items():  # one copy per pair, not one per check
        live[idx] = live[idx].model_copy(update={"checks": {**live[idx].checks, **results}})


def _kb_sentences_for(pairs: list[QAPair], st: CheckSettings, chunks: dict[str, Chunk]) -> dict[str, list[str]]:
    """Near-matching KB sentences for each pair's question, via one batched LSH query."""
    if not pairs or not getattr(st, "whole_kb", False) or not chunks:
        return {}
    from goldset.filters.neardup import SentenceIndex
    from goldset.filters.textsim import split_sentences

    index = SentenceIndex([s for c in chunks.values() for s in split_sentences(c.text)])
    hits = index.query_many([p.question for p in pairs], threshold=0.5)
    return {p.id: [index.sentences[i] for i, _ in h] for p, h in zip(pairs, hits, strict=True)}


def _rank(names: list[str]) -> Callable[[QAPair], tuple[int, int, float]]:
    """Which pair of a duplicate group to keep: reviewed first, then fewest failed checks, then least copying."""
    order = {PairStatus.accepted: 0, PairStatus.stale: 1}

    def key(p: QAPair) -> tuple[int, int, float]:
        others = [p.checks[n] for n in names if n != duplicates.NAME and n in p.checks]
        failed = sum(1 for c in others if not c.passed)
        copy = p.checks["verbatim"].score if "verbatim" in p.checks and p.checks["verbatim"].score else 0.0
        return (order.get(p.status, 2), failed, copy)

    return key


async def _semantic_edges(
    ws: Workspace,
    endpoint: Endpoint,
    live: list[QAPair],
    against: list[QAPair],
    settings: FilterSettings,
    report: FilterReport,
) -> list[tuple[int, int, float]]:
    """Embedding links between questions (indices into duplicates.participants), embeddings cached in the
    call journal so a re-run sends nothing."""
    from goldset.llm import CallJournal, LLMClient

    st: duplicates.Settings = settings.for_check(duplicates.NAME)  # type: ignore[assignment]
    everyone = duplicates.participants(live, against)
    with CallJournal(ws.cache_path) as journal:
        async with LLMClient(endpoint, journal) as client:
            vectors = await client.embed([p.question for p in everyone])
            report.embedding = client.stats.as_dict()
    missing = sum(1 for v in vectors if v is None)
    if missing:
        report.judge_errors.append(f"embeddings: {missing} question(s) got no vector; lexical duplicates only there")
    return duplicates.semantic_edges(vectors, st.semantic_threshold)


def _run_duplicates(
    live: list[QAPair],
    names: list[str],
    settings: FilterSettings,
    against: list[QAPair],
    report: FilterReport,
    edges: Sequence[tuple[int, int, float]] = (),
    embedding_model: str | None = None,
) -> None:
    spec = CHECKS[duplicates.NAME]
    st: duplicates.Settings = settings.for_check(duplicates.NAME)  # type: ignore[assignment]
    verdicts = duplicates.find(live, st, rank=_rank(names), against=against, extra_edges=edges)
    extra = {"against": sorted((a.id, a.question) for a in against), "embedding_model": embedding_model}
    s_hash = _settings_hash(spec, st, extra)
    groups: set[str] = set()
    for idx, pair in enumerate(live):
        res = verdicts[pair.id]
        if res.duplicate_of:
            groups.add(res.duplicate_of)
        old = pair.checks.get(duplicates.NAME)
        if _same_verdict(old, res) and old is not None and old.settings_hash == s_hash:
            report.reused += 1
            report.per_check[duplicates.NAME].reused += 1
            continue
        i_hash = _input_hash(spec, pair, {})
        upd = {"settings_hash": s_hash, "input_hash": i_hash}
        live[idx] = _set_check(pair, duplicates.NAME, res.model_copy(update=upd))
        report.computed += 1
    report.duplicate_groups = len(groups)


async def _run_llm(
    ws: Workspace,
    plan: _LLMPlan,
    live: list[QAPair],
    names: list[str],
    settings: FilterSettings,
    chunks: dict[str, Chunk],
    report: FilterReport,
    do_repair: bool,
    progress: ProgressCallback | None,
) -> list[QAPair]:
    from goldset.llm import CallJournal, LLMClient

    spec = CHECKS[groundedness.NAME]
    g_st: groundedness.Settings = settings.for_check(groundedness.NAME)  # type: ignore[assignment]
    kb_chunks = sorted(chunks.values(), key=lambda c: c.id)
    kb_hash = _kb_hash(chunks)
    judge = plan.judge_prompt is not None
    g_hash = _settings_hash(
        spec, g_st, {"model": plan.endpoint.model, "prompt": plan.judge_prompt.hash if judge else None,  # type: ignore[union-attr]
                     "kb_context": settings.kb_context_chunks}
    )  # fmt: skip

    def g_input(p: QAPair) -> str:
        return _groundedness_input(p, chunks, kb_hash)

    with CallJournal(ws.cache_path) as journal:
        async with LLMClient(plan.endpoint, journal) as client:

            async def judge_all(targets: list[QAPair]) -> dict[str, CheckResult]:
                done = 0

                def tick() -> None:
                    nonlocal done
                    done += 1
                    if progress is not None:
                        progress(Progress("judge", done, len(targets)))

                outcomes = await groundedness.judge_many(
                    targets, chunks, g_st, client, plan.judge_prompt,  # type: ignore[arg-type]
                    kb_chunks=kb_chunks, kb_context_chunks=settings.kb_context_chunks, on_done=tick,
                )  # fmt: skip
                got: dict[str, CheckResult] = {}
                for o in outcomes:
                    if o.check is None:
                        report.judge_errors.append(f"{o.pair_id}: {o.error}")
                    else:
                        got[o.pair_id] = o.check
                return got

            if judge:
                todo = []
                for idx, p in enumerate(live):
                    if p.status not in JUDGED:
                        continue
                    if _current(p, groundedness.NAME, g_hash, g_input(p)) is not None:
                        report.reused += 1
                        report.per_check[groundedness.NAME].reused += 1
                    else:
                        todo.append(idx)
                got = await judge_all([live[i] for i in todo])
                for idx in todo:
                    res = got.get(live[idx].id)
                    if res is not None:
                        upd = {"settings_hash": g_hash, "input_hash": g_input(live[idx])}
                        live[idx] = _set_check(live[idx], groundedness.NAME, res.model_copy(update=upd))
                        report.computed += 1

            if do_repair:
                await _repair(plan, live, names, settings, chunks, report, client, judge_all if judge else None,
                              g_hash, g_input)  # fmt: skip
            report.llm = client.stats.as_dict()
    return live


async def _repair(
    plan: _LLMPlan,
    live: list[QAPair],
    names: list[str],
    settings: FilterSettings,
    chunks: dict[str, Chunk],
    report: FilterReport,
    client: Any,
    judge_all: Callable[[list[QAPair]], Any] | None,
    g_hash: str,
    g_input: Callable[[QAPair], str],
) -> None:
    """Rewrite answers that fail only the verbatim check, re-check them, keep rewrites that no longer copy."""
    targets = [
        idx for idx, p in enumerate(live)
        if p.status in JUDGED and {n for n in names if n in p.checks and not p.checks[n].passed} == {"verbatim"}
    ]  # fmt: skip
    if not targets:
        return
    answers = await repair_mod.rewrite_many([live[i] for i in targets], chunks, client, plan.repair_prompt)
    candidates: list[QAPair] = []
    for idx in targets:
        got = answers[live[idx].id]
        if isinstance(got, Exception):
            report.repair_failed[live[idx].id] = str(got)
            continue
        candidates.append(repair_mod.rewritten(live[idx], got, plan.endpoint.model))
    if not candidates:
        return
    checked = list(candidates)
    sub = FilterReport(per_check={n: CheckCounts() for n in names})
    _run_pair_checks(checked, names, settings, chunks, sub, None)
    if judge_all is not None:
        verdicts = await judge_all(checked)
        for i, p in enumerate(checked):
            if p.id in verdicts:
                upd = {"settings_hash": g_hash, "input_hash": g_input(p)}
                checked[i] = _set_check(p, groundedness.NAME, verdicts[p.id].model_copy(update=upd))
    position = {p.id: i for i, p in enumerate(live)}
    for p in checked:
        failed = [n for n in names if n in p.checks and not p.checks[n].passed]
        if groundedness.NAME in names and groundedness.NAME not in p.checks:
            failed.append(groundedness.NAME)  # the judge could not confirm the rewrite
        if failed:
            report.repair_failed[p.id] = f"rewrite still fails {', '.join(failed)}; original kept"
            continue
        live[position[p.id]] = p
        report.repaired.append(p.id)
        report.computed += sub.computed


def _count(pairs: list[QAPair], names: list[str], settings: FilterSettings, report: FilterReport) -> None:
    live = [p for p in pairs if p.status != PairStatus.retired]
    report.status_counts = dict(sorted(Counter(p.status.value for p in pairs).items()))
    by_type: dict[str, Counter[str]] = {}
    for p in live:
        by_type.setdefault(p.question_type.value, Counter())[p.status.value] += 1
    report.status_by_type = {t: dict(sorted(c.items())) for t, c in sorted(by_type.items())}
    for name in names:
        counts = report.per_check.setdefault(name, CheckCounts())
        examples: list[FailureExample] = []
        for p in live:
            res = p.checks.get(name)
            if res is None:
                continue
            if res.passed:
                counts.passed += 1
            else:
                counts.failed += 1
                t = report.failures_by_type.setdefault(name, {})
                t[p.question_type.value] = t.get(p.question_type.value, 0) + 1
                if len(examples) < settings.examples:
                    examples.append(FailureExample(p.id, p.question, res.reason))
        if examples:
            report.examples[name] = examples
