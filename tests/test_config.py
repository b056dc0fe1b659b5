"""Settings: one model for goldset.yaml, precedence (option > environment > .env > goldset.yaml > default), errors
that name where the bad value came from, and secrets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goldset.config import SECTIONS, Settings, get_env, load_settings, read_config_file
from goldset.errors import ConfigError, WorkspaceError
from goldset.workspace import Workspace, find_workspace, resolve_workspace

TEMPLATE = Path(__file__).resolve().parents[1] / "goldset" / "_templates" / "goldset.yaml"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    for name in ("GOLDSET_KB__MAX_TOKENS", "GOLDSET_KB__INCLUDE", "GOLDSET_LLM__TIMEOUT_S"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "goldset.yaml").write_text("kb:\n  max_tokens: 500\n  path: kb\n", encoding="utf-8")
    return Workspace(tmp_path)


def test_every_section_has_its_model_and_the_template_loads() -> None:
    assert SECTIONS == ("kb", "llm", "generate", "filter", "review", "versioning", "eval", "queries")
    for section in SECTIONS:
        model = Settings.model_fields[section].annotation
        assert model is not None and model.model_config.get("extra") == "forbid", section
    template = TEMPLATE.read_text(encoding="utf-8")
    ws = Workspace(TEMPLATE.parent)
    settings = load_settings(ws)
    assert "fraction: 0.15" in template and settings.review.fraction == 0.15


def test_section_models_are_the_settings_models() -> None:
    import importlib

    from goldset.cli._common import SECTION_MODELS

    assert tuple(SECTION_MODELS) == SECTIONS
    for name, where in SECTION_MODELS.items():
        module, _, attr = where.partition(":")
        assert getattr(importlib.import_module(module), attr) is Settings.model_fields[name].annotation, name


def test_check_given_validates_the_sections_given_a_value(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldset.cli._common import check_given
    from goldset.context import Context

    # The template's empty `filter: checks:` gives nothing: left for the part that asks (its defaults are valid).
    ws.config_path.write_text("kb:\n  max_tokens: 500\nfilter:\n  checks:\n", encoding="utf-8")
    ctx = Context.open(ws)
    check_given(ctx)
    assert "kb" in ctx._sections and "filter" not in ctx._sections
    ws.config_path.write_text("filter:\n  checks:\n  examples: -1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"goldset.yaml: filter.examples: "):
        check_given(Context.open(ws))
    monkeypatch.setenv("GOLDSET_QUERIES__NOPE", "1")
    with pytest.raises(ConfigError, match=r"^environment variable GOLDSET_QUERIES__NOPE: unknown setting"):
        check_given(Context.open(None))


def test_precedence_option_env_dotenv_file_default(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_settings(ws).kb
    assert (s.max_tokens, s.path, s.target_tokens) == (500, "kb", 350)
    ws.env_file.write_text("GOLDSET_KB__MAX_TOKENS=550\nGOLDSET_KB__INCLUDE=[\"*.md\"]\n", encoding="utf-8")
    assert load_settings(ws).kb.max_tokens == 550
    monkeypatch.setenv("GOLDSET_KB__MAX_TOKENS", "600")
    s = load_settings(ws).kb
    assert (s.max_tokens, s.include, s.path) == (600, ["*.md"], "kb")
    s = load_settings(ws, kb={"max_tokens": 900, "path": None}).kb
    assert (s.max_tokens, s.path) == (900, "kb"), "None means 'option not given'"


def test_nested_settings_come_from_the_environment(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    ws.config_path.write_text("llm:\n  endpoints:\n    gen:\n      model: m\n      concurrency: 2\n", encoding="utf-8")
    monkeypatch.setenv("GOLDSET_LLM__ENDPOINTS__GEN__CONCURRENCY", "16")
    monkeypatch.setenv("GOLDSET_FILTER__CHECKS__VERBATIM__MAX_CONTAINMENT", "0.5")
    monkeypatch.setenv("GOLDSET_FILTER__CHECKS__SELF_CONTAINED", "false")
    monkeypatch.setenv("GOLDSET_EVAL__KS", "[1, 5]")
    s = load_settings(ws)
    assert s.llm.endpoints["gen"].concurrency == 16 and s.llm.endpoints["gen"].model == "m"
    assert s.filter.for_check("verbatim").max_containment == 0.5  # type: ignore[attr-defined]
    assert s.filter.for_check("self_contained").enabled is False
    assert s.eval.ks == [1, 5]


def test_an_error_in_a_variable_names_the_variable(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDSET_LLM__TIMEOUT_S", "2")
    with pytest.raises(ConfigError) as err:
        load_settings(ws)
    message = str(err.value)
    assert message.startswith("environment variable GOLDSET_LLM__TIMEOUT_S: unknown setting 'llm.timeout_s'")
    assert "goldset.yaml" not in message and "GOLDSET_LLM__ENDPOINTS__<NAME>__TIMEOUT_S" in message
    monkeypatch.delenv("GOLDSET_LLM__TIMEOUT_S")
    monkeypatch.setenv("GOLDSET_KB__MAX_TOKENS", "lots")
    with pytest.raises(ConfigError, match=r"^environment variable GOLDSET_KB__MAX_TOKENS: kb.max_tokens: "):
        load_settings(ws)
    monkeypatch.delenv("GOLDSET_KB__MAX_TOKENS")
    monkeypatch.setenv("GOLDSET_KBB__MAX_TOKENS", "5")
    with pytest.raises(ConfigError, match=r"^environment variable GOLDSET_KBB__MAX_TOKENS: unknown section 'kbb'"):
        load_settings(ws)


def test_an_error_in_dotenv_or_an_option_says_so(ws: Workspace) -> None:
    ws.env_file.write_text("GOLDSET_REVIEW__FRACTION=2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\.env: GOLDSET_REVIEW__FRACTION: review.fraction: "):
        load_settings(ws)
    ws.env_file.unlink()
    with pytest.raises(ConfigError, match=r"^option generate.pairs_per_chunk: "):
        load_settings(ws, generate={"pairs_per_chunk": 0})


def test_unknown_settings_in_goldset_yaml_are_errors_naming_them(ws: Workspace) -> None:
    ws.config_path.write_text("review:\n  sample_sizee: 5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings(ws)
    assert "goldset.yaml: unknown setting 'review.sample_sizee'; known here: fraction, seed," in str(err.value)
    ws.config_path.write_text("kb:\n  max_tokens: lots\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"goldset.yaml: kb.max_tokens: "):
        load_settings(ws)


def test_unknown_section_and_bad_yaml(ws: Workspace) -> None:
    ws.config_path.write_text("kbb:\n  x: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown section 'kbb'"):
        read_config_file(ws)
    ws.config_path.write_text("kb: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"goldset.yaml:\d+: not valid YAML"):
        load_settings(ws)
    ws.config_path.write_text("kb: 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"section 'kb' must be a mapping"):
        load_settings(ws)


def test_validator_messages_lose_pydantics_prefix(ws: Workspace) -> None:
    ws.config_path.write_text("kb:\n  target_tokens: 400\n  max_tokens: 300\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings(ws)
    assert str(err.value).startswith(f"{ws.config_path}: kb.max_tokens: max_tokens (300) is below target_tokens (400)")
    assert "Value error" not in str(err.value)


def test_chunk_sizes_that_do_not_fit_name_the_one_set_last(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """KBSettings checks the sizes against each other once; the error names the setting of the pair set with the
    highest precedence (where the user changed something), not the goldset.yaml value it clashes with."""
    from pydantic import ValidationError

    from goldset.kb.settings import KBSettings

    below = "max_tokens (700) is below target_tokens (800); chunks aim at target_tokens and never exceed max_tokens"
    ws.config_path.write_text("kb:\n  target_tokens: 350\n  max_tokens: 700\n  min_tokens: 60\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^option kb\.target_tokens: {re.escape(below)}"):
        load_settings(ws, kb={"target_tokens": 800})
    monkeypatch.setenv("GOLDSET_KB__MIN_TOKENS", "500")
    with pytest.raises(ConfigError, match=r"^environment variable GOLDSET_KB__MIN_TOKENS: kb\.min_tokens: min_tokens "
                                          r"\(500\) is above target_tokens \(350\)"):  # fmt: skip
        load_settings(ws)
    monkeypatch.delenv("GOLDSET_KB__MIN_TOKENS")
    assert load_settings(ws, kb={"target_tokens": 800, "max_tokens": 900}).kb.max_tokens == 900
    with pytest.raises(ValidationError, match=re.escape(below)):  # the library's own settings: the same wording
        KBSettings(target_tokens=800)


def test_find_workspace_walks_up_and_fails_clearly(ws: Workspace, tmp_path_factory: pytest.TempPathFactory) -> None:
    sub = ws.root / "a" / "b"
    sub.mkdir(parents=True)
    found = find_workspace(sub)
    assert found is not None and found.root == ws.root.resolve()
    assert resolve_workspace(sub).root == ws.root.resolve() and resolve_workspace(ws) is ws
    with pytest.raises(WorkspaceError, match="goldset init"):
        find_workspace(tmp_path_factory.mktemp("elsewhere"))


def test_secrets_come_from_env_then_dotenv(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    assert get_env("MY_KEY", ws) is None
    ws.env_file.write_text("# comment\nexport MY_KEY='from-dotenv'\n", encoding="utf-8")
    assert get_env("MY_KEY", ws) == "from-dotenv"
    assert load_settings(ws).kb.max_tokens == 500, "a .env with other variables is not a settings error"
    monkeypatch.setenv("MY_KEY", "from-env")
    assert get_env("MY_KEY", ws) == "from-env"
