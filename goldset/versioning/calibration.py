"""What a release says about the judge calibration it carries (``manifest.calibration``, written by ``goldset judge
calibrate``): a "Judge calibration" section in the changelog, and notes in the release's output when the judge's
agreement with the experts is below ``review.calibration.min_kappa`` (or rests on too few pairs to tell, or cannot
be measured), or when the calibration is older than the review decisions or measured another judge prompt or model
than the filters use now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldset.errors import GoldsetError

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.schema import Manifest, QAPair


def calibration_notes(manifest: Manifest, pairs: list[QAPair], ctx: Context) -> list[str]:
    """What the release must say about the judge calibration it carries: agreement below
    ``review.calibration.min_kappa`` (or too few pairs to tell, or unmeasurable), and a calibration made before
    the latest review decisions or with another judge prompt or model than the filters use now."""
    from goldset.review.settings import ReviewSettings
    from goldset.schema.manifest import review_fingerprint

    cal = manifest.calibration
    if cal is None:
        return []
    notes: list[str] = []
    warning = cal.warning(ctx.section(ReviewSettings).calibration.min_kappa)
    if warning is not None:
        notes.append(warning)
    if cal.review_fingerprint and cal.review_fingerprint != review_fingerprint(pairs):
        notes.append(
            f"the judge calibration ({cal.calibrated_at.date().isoformat()}) was made before the latest review "
            "decisions; re-run `goldset judge calibrate` for figures on every reviewed pair"
        )
    now = _current_judge(ctx)
    if now is not None and (now[0] != cal.model or now[1] != cal.prompt_hash):
        what = f"model {now[0]}" if now[0] != cal.model else f"prompt {now[1][:12]}"
        notes.append(
            f"the judge calibration measured {cal.model} with prompt {cal.prompt_hash[:12]}, but the filters' judge is "
            f"now {what}; re-run `goldset judge calibrate`"
        )
    return notes


def _current_judge(ctx: Context) -> tuple[str, str] | None:
    """(model, prompt hash) of the filters' judge as configured now; None when no judge endpoint is configured."""
    from goldset.filters import groundedness
    from goldset.llm import endpoint_configured, resolve_endpoint
    from goldset.prompts import load_prompt

    try:
        if not endpoint_configured(ctx, "judge"):
            return None
        prompt = load_prompt(groundedness.PROMPT_ID, ctx.workspace.prompts_dir)
        return resolve_endpoint(ctx, "judge").model, prompt.hash
    except GoldsetError:  # a broken llm section is `goldset filter`'s to report, not the release's
        return None


def calibration_markdown(manifest: Manifest, notes: list[str]) -> str:
    """The changelog's "Judge calibration" section (empty without a calibration): the figures, then ``notes``."""
    from goldset.schema.manifest import calibration_summary

    summary = calibration_summary(manifest)
    if summary is None:
        return ""
    lines = ["", "### Judge calibration", "", summary.headline + ".", ""]
    lines += ["| | pairs | accuracy | Cohen's kappa | both grounded | false alarms | missed | both not grounded |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for row in summary.rows:
        a = row.agreement
        kappa = "too few pairs" if row.too_few else ("–" if row.kappa is None else f"{row.kappa:.2f}")
        accuracy = "–" if row.accuracy is None else f"{row.accuracy:.0%}"
        lines.append(f"| {row.group} | {row.pairs} | {accuracy} | {kappa} | {a.both_grounded} | {a.false_alarms} | "
                     f"{a.missed} | {a.both_not_grounded} |")  # fmt: skip
    lines.append("")
    lines += [f"**Note:** {note}." if not note.endswith(".") else f"**Note:** {note}" for note in notes]
    return "\n".join(lines).rstrip() + "\n"
