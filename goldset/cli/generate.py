"""`goldset generate`: candidate QA pairs from the knowledge base's chunks, with a progress bar and a summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from goldset.cli._common import ProgressDisplay, WorkspaceOption, console, err_console, money

if TYPE_CHECKING:
    from goldset.generation.estimate import Estimate
    from goldset.generation.runner import GenerationReport
    from goldset.progress import Progress

app = typer.Typer()


@app.command()
def generate(
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=0, help="At most this many chunks.")] = None,
    docs: Annotated[
        str | None, typer.Option("--docs", help="Only chunks of documents matching this glob, e.g. 'tutorial/*.md'.")
    ] = None,
    all_chunks: Annotated[
        bool, typer.Option("--all", help="Also chunks that already have pairs (unchanged calls come from the cache).")
    ] = False,
    pairs_per_chunk: Annotated[
        int | None, typer.Option("--pairs-per-chunk", help="Pairs asked for per call (1 to 20).")
    ] = None,
    language: Annotated[
        str | None, typer.Option("--language", help="'auto' (each chunk's language) or a code: en, zh, …")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model name (overrides the endpoint's).")] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency", "-j", help="Calls in flight.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Call the model even when the journal has it.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print calls, tokens and dollars a run would take; call nothing.")
    ] = False,
    from_queries: Annotated[
        bool, typer.Option("--from-queries", help="Draft answers for the imported real questions instead.")
    ] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Generate candidate QA pairs into data/pairs.jsonl (default: only chunks that have no pairs yet)."""
    from goldset.cli._common import context as find_ctx

    if from_queries:
        from goldset.queries.drafting import draft_answers

        rep = draft_answers(find_ctx(workspace), limit=limit, concurrency=concurrency, no_cache=no_cache,
                            dry_run=dry_run, model=model)  # fmt: skip
        out = console()
        if rep.dry_run:
            cost = ("~" if rep.cost_usd is not None else "") + money(rep.cost_usd, model)
            out.print(f"real questions {rep.questions} ({rep.already_done} already have pairs)  calls {rep.calls} to "
                      f"pay, {rep.cache_hits} from the call journal; none made now  tokens ~{rep.prompt_tokens:,} "
                      f"prompt + {rep.completion_tokens:,} expected output  cost {cost}")  # fmt: skip
            return
        out.print(f"real questions {rep.questions}  answered {rep.answered}  unanswerable {rep.unanswerable}  "
                  f"rejected {rep.rejected}  failed calls {rep.failed}  calls {rep.llm.calls}  "
                  f"cache hits {rep.llm.cache_hits}")  # fmt: skip
        for line in rep.failures[:5]:
            out.print(f"  failed: {line}", markup=False)
        out.print(f"Candidates in {rep.pairs_path}. Next: goldset filter")
        return
    from goldset.generation.runner import generate as run_generate

    given = {"pairs_per_chunk": pairs_per_chunk, "language": language, "concurrency": concurrency}
    ctx = find_ctx(workspace, generate=given)  # GenerationSettings checks them: "option generate.pairs_per_chunk: …"
    if dry_run:
        from goldset.generation.estimate import estimate

        est = estimate(ctx, limit=limit, docs=docs, all_chunks=all_chunks, no_cache=no_cache, model=model)
        _print_estimate(est)
        return
    show = ProgressDisplay()
    try:
        with show:
            report = run_generate(
                ctx, limit=limit, docs=docs, all_chunks=all_chunks, no_cache=no_cache, model=model, progress=show
            )
    except KeyboardInterrupt:
        _interrupted(show.last.get("generate"))
    _print_summary(report)
    if report.chunks and not (report.pairs_kept or report.pairs_existing):  # already present: --all, from the cache
        from goldset.errors import RunFailed

        where = f"see {report.pairs_path} and {report.failures_path}" if report.pairs_path else "see the summary"
        raise RunFailed(
            f"generation kept 0 pairs of the {report.chunks} chunk(s) asked ({report.pairs_rejected} rejected, "
            f"{report.chunks_failed} chunk(s) failed; {where}): check the model and the generation prompt"
        )


def _interrupted(last: Progress | None) -> NoReturn:
    """Ctrl-C: what was done, and that a re-run resumes (exit 130, as a shell reports SIGINT)."""
    done = f"{last.done} of {last.total} chunk(s)" if last is not None else "before the first chunk was done"
    err_console().print(
        f"interrupted after {done}: the pairs of finished chunks are kept and every answered call is in the "
        "journal; run `goldset generate` again to resume (it asks only for what was not done)",
        soft_wrap=True,
    )
    raise typer.Exit(130)


def _print_estimate(est: Estimate) -> None:
    out = console()
    out.print(
        f"chunks        {est.chunks} ({est.already_done} already have pairs, "
        f"{est.skipped_small} too small to ask about)"
    )
    out.print(
        f"calls         {est.calls} to pay, {est.cache_hits} from the call journal "
        f"({est.partner_calls} with a partner chunk); none made now"
    )
    out.print(f"pairs asked   {est.pairs_requested}")
    out.print(
        f"tokens        ~{est.tokens:,} ({est.prompt_tokens:,} prompt + {est.completion_tokens:,} expected output, "
        "for the calls to pay)"
    )
    out.print(f"model         {est.model or 'none configured'}")
    if est.concurrency:
        out.print(f"parallelism   {est.concurrency}", markup=False)
    out.print(f"cost          {'~' if est.cost_usd is not None else ''}{money(est.cost_usd, est.model)}")


def _print_summary(report: GenerationReport) -> None:
    out = console()
    if report.chunks == 0:
        if report.already_done:
            out.print(
                f"Nothing to generate: the {report.already_done} selected chunk(s) already have pairs "
                "(use --all to ask again; unchanged calls come from the cache)."
            )
        else:
            out.print("Nothing to generate: no chunk matches the selection (check --docs, or run `goldset ingest`).")
        return
    llm = report.llm
    out.print(
        f"chunks {report.chunks}  calls {llm.calls}  cache hits {llm.cache_hits}  failed calls {llm.failures}  "
        f"{report.seconds:.1f}s"
    )
    out.print(
        f"requests {llm.requests} sent  retries {llm.retries}  repairs {llm.repairs}  "
        f"format fallbacks {llm.fallbacks}  retry budget left {llm.retry_budget_left} of {llm.retry_budget}"
    )
    out.print(f"format {llm.format_line}  parallelism {llm.concurrency_line}")
    if report.fewer_pairs:
        out.print(
            f"asked again with fewer pairs ×{report.fewer_pairs} (replies cut off at max_tokens; "
            f"{report.pairs_not_asked} planned pair(s) not asked)"
        )
    out.print(
        f"pairs  kept {report.pairs_kept}  rejected {report.pairs_rejected}  malformed {report.items_failed}  "
        f"already present {report.pairs_existing}  asked for but not returned {report.pairs_missing}"
    )
    out.print(
        f"tokens {llm.tokens:,} ({llm.prompt_tokens:,} prompt + {llm.completion_tokens:,} completion)  "
        f"cost {money(llm.cost, report.estimate.model if report.estimate else None)}"
    )
    if report.failures:
        reasons = ", ".join(f"{k} ×{v}" for k, v in list(report.failure_reasons.items())[:3])
        out.print(f"failures: {reasons}; details in {report.failures_path}")
    if report.pairs_path is not None and (report.pairs_kept or report.pairs_existing):
        out.print(f"Candidates in {report.pairs_path}. Next: goldset filter")
