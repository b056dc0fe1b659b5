"""`goldset --version` and goldset.__version__ say the installed version, and CHANGELOG.md has an entry for it."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from typer.testing import CliRunner

import goldset
from goldset.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_version_option_prints_the_installed_version_and_exits_0() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"goldset {version('goldset')}"


def test_version_needs_no_command_and_loads_nothing_heavy() -> None:
    probe = (
        "import sys; sys.argv = ['goldset', '--version']\n"
        "from goldset.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, ' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert lines[0] == f"goldset {version('goldset')}"
    code, modules = lines[1].split(" ", 1)
    assert code in ("0", "None")
    assert not set(modules.split()) & {"pandas", "openai", "dvc", "pydantic", "httpx"}, modules


def test_dunder_version_is_the_package_metadata_and_is_public() -> None:
    assert goldset.__version__ == version("goldset")
    assert "__version__" in goldset.__all__ and "__version__" in dir(goldset)
    from goldset import __version__

    assert __version__ == goldset.__version__


def test_changelog_has_an_unreleased_section_and_the_current_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    assert headings[0] == "Unreleased", headings
    assert version("goldset") in headings, f"CHANGELOG.md has no '## [{version('goldset')}]' section: {headings}"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE)
    assert declared and declared.group(1) in headings, "pyproject.toml's version has a CHANGELOG.md section"
