"""The documentation keeps up with the code: every command, subcommand and option of the CLI is in the README or
a hand-written page of docs/, every public name is documented, the generated reference pages are current, and the
links between pages and the pictures they show exist."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import goldset

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Pages docs/gen_reference.py writes whole: they do not count as documenting a command or an option.
GENERATED = {"configuration.md", "run-format.md", "python-api.md"}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _written_docs() -> str:
    """README.md and every hand-written page of docs/."""
    pages = [ROOT / "README.md", *(p for p in sorted(DOCS.glob("*.md")) if p.name not in GENERATED)]
    return "\n".join(p.read_text(encoding="utf-8") for p in pages)


def _commands() -> list[tuple[str, Any]]:
    """('goldset review push', click command) for the root, every command and every subcommand."""
    import typer.main

    from goldset.cli import app

    out: list[tuple[str, Any]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        out.append((" ".join(["goldset", *path]), cmd))
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return out


def _long_options(cmd: Any) -> list[str]:
    return [
        o
        for p in cmd.params
        if p.param_type_name == "option"
        for o in (*p.opts, *p.secondary_opts)
        if o.startswith("--") and o != "--help"
    ]


def test_the_cli_walk_finds_every_command_group_and_option() -> None:
    names = [n for n, _ in _commands()]
    assert {"goldset eval", "goldset review push", "goldset judge calibrate", "goldset export"} <= set(names)
    eval_cmd = dict(_commands())["goldset eval"]
    assert {"--dataset", "--thresholds", "--judge", "--no-judge"} <= set(_long_options(eval_cmd))


def test_every_command_and_subcommand_is_documented() -> None:
    text = _written_docs()
    # `goldset cmd sub` in prose or code, also inside a longer command line
    missing = [
        name
        for name, _ in _commands()
        if name != "goldset" and not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)
    ]
    assert not missing, f"commands missing from README.md and docs/*.md: {missing}"


def test_every_option_of_every_command_is_documented() -> None:
    text = _written_docs()
    missing = sorted(
        f"{name} {opt}"
        for name, cmd in _commands()
        for opt in _long_options(cmd)
        if not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text)
    )
    assert not missing, f"options missing from README.md and docs/*.md: {missing}"


def test_every_public_name_is_in_the_readme_python_api_section_or_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Python API\n(.*?)(?=^## )", readme, re.MULTILINE | re.DOTALL)
    assert section, "README.md has a '## Python API' section"
    assert "docs/python-api.md" in section.group(1), "the README's Python API section links the full list"
    docs = section.group(1) + "\n".join(p.read_text(encoding="utf-8") for p in DOCS.glob("*.md"))
    missing = [name for name in goldset.__all__ if f"goldset.{name}" not in docs]
    assert not missing, f"public names missing from the docs: {missing}"
    for package in _generator().API_PACKAGES:
        module = importlib.import_module(package)
        missing = [name for name in module.__all__ if f"{package}.{name}" not in docs]
        assert not missing, f"public names of {package} missing from the docs: {missing}"


def test_generated_reference_pages_are_current() -> None:
    stale = [
        str(path.relative_to(ROOT))
        for path, text in _generator().pages().items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    assert not stale, f"out of date: {stale}; run python docs/gen_reference.py"


def test_the_configuration_reference_lists_every_setting_with_its_variable() -> None:
    from goldset.config import Settings

    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for section, info in Settings.model_fields.items():
        assert f"## `{section}`" in page
        for field in info.annotation.model_fields:  # type: ignore[union-attr]
            assert f"`{section}.{field}" in page, f"{section}.{field}"
    for needle in ("`GOLDSET_KB__MAX_TOKENS`", "`GOLDSET_LLM__ENDPOINTS__<name>__CONCURRENCY`",
                   "`GOLDSET_FILTER__CHECKS__VERBATIM__MAX_CONTAINMENT`", "`GOLDSET_EVAL__JUDGE__MAX_CONTEXTS`",
                   "`.env`", "`OPENAI_API_KEY`", "`LABEL_STUDIO_URL`"):  # fmt: skip
        assert needle in page, needle


def test_the_documented_environment_variables_name_the_settings_they_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variable the reference lists really sets its setting (checked on a sample of rows, one per section)."""
    from goldset.config import load_settings

    cell = r"(?:[^|\\]|\\.)+"  # a table cell, escaped pipes included
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    rows = re.findall(rf"^\| `([a-z_.<>]+)` \|{cell}\|{cell}\| `(GOLDSET_[A-Z_]+)` \|", page, re.MULTILINE)
    by_section: dict[str, tuple[str, str]] = {}
    for setting, var in rows:
        by_section.setdefault(setting.split(".")[0], (setting, var))
    picks = {"kb": ("kb.max_tokens", "900"), "generate": ("generate.seed", "7"), "review": ("review.seed", "3"),
             "eval": ("eval.judge.max_contexts", "4"), "filter": ("filter.checks.verbatim.max_containment", "0.5"),
             "versioning": ("versioning.golden", "accepted"), "queries": ("queries.candidates", "7")}  # fmt: skip
    documented = dict(rows)
    for setting, value in picks.values():
        monkeypatch.setenv(documented[setting], value)
    s = load_settings(None)
    assert s.kb.max_tokens == 900 and s.generate.seed == 7 and s.review.seed == 3
    assert s.eval.judge.max_contexts == 4 and s.versioning.golden == "accepted" and s.queries.candidates == 7
    assert s.filter.for_check("verbatim").max_containment == 0.5  # type: ignore[attr-defined]
    assert set(by_section) == {"kb", "llm", "generate", "filter", "review", "versioning", "eval", "queries"}


def test_the_run_format_examples_are_valid_run_files(tmp_path: Path) -> None:
    from goldset.evaluation.run_files import iter_samples

    page = (DOCS / "run-format.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(.*?)```", page, re.DOTALL)
    assert block
    run = tmp_path / "run.jsonl"
    run.write_text(block.group(1), encoding="utf-8")
    samples = [s for _, _, s in iter_samples(run)]
    assert len(samples) == 3 and samples[2].error and samples[0].contexts[0].doc_id == "en/body.md"


def test_the_metrics_page_lists_every_registered_metric_with_a_citation() -> None:
    from goldset.evaluation.metrics import list_metrics

    page = (DOCS / "metrics.md").read_text(encoding="utf-8")
    for m in list_metrics():
        assert f"| `{m.name}` |" in page, m.name
        assert m.citation.strip(), f"{m.name} has no citation"
    for source in ("Järvelin & Kekäläinen", "Lin, ROUGE", "Es et al., RAGAS", "Wilson", "Cohen", "Holm", "Fleiss"):
        assert source in page, source


def test_links_between_pages_and_pictures_exist() -> None:
    broken = []
    for page in [ROOT / "README.md", ROOT / "CHANGELOG.md", *DOCS.glob("*.md")]:
        text = re.sub(r"`[^`\n]*`", "", page.read_text(encoding="utf-8"))  # links are not in code spans
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            if not (page.parent / target).exists() and target != "docs/loop.md":  # loop.md: another branch adds it
                broken.append(f"{page.relative_to(ROOT)} → {target}")
    assert not broken, broken


def _anchors(markdown: str) -> set[str]:
    """GitHub's ids of a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    return {
        re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        for title in re.findall(r"^#{1,6} (.+)$", markdown, re.MULTILINE)
    }


def test_anchors_within_and_across_pages_exist() -> None:
    assert {"reviewing-pairs-for-domain-experts", "expert-review-in-label-studio-goldset-review", "llm"} <= _anchors(
        (ROOT / "README.md").read_text(encoding="utf-8") + (DOCS / "configuration.md").read_text(encoding="utf-8")
    )
    broken, checked = [], 0
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.endswith("loop.md"):
                continue
            other = (page.parent / target) if target else page
            checked += 1
            if anchor not in _anchors(other.read_text(encoding="utf-8")):
                broken.append(f"{page.relative_to(ROOT)} → {target}#{anchor}")
    assert checked >= 8 and not broken, (checked, broken)


def test_the_readme_shows_the_report_and_a_review_task_under_300_kb() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\((docs/images/[^)]+\.png)\)", readme)
    assert {"docs/images/report.png", "docs/images/review-task.png"} <= set(pictures), pictures
    for picture in pictures:
        size = (ROOT / picture).stat().st_size
        assert 10_000 < size < 300_000, f"{picture}: {size} bytes"
