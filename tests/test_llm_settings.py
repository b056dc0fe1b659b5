"""Endpoint resolution: config, environment, roles, prices, and the 'not configured' messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldset.errors import ConfigError, EndpointError
from goldset.llm import PLACEHOLDER_KEY, Usage, cost_usd, endpoint_configured, resolve_endpoint
from goldset.redaction import redact
from goldset.workspace import Workspace


def make_ws(tmp_path: Path, yaml_text: str = "", env: str = "") -> Workspace:
    (tmp_path / "goldset.yaml").write_text(yaml_text, encoding="utf-8")
    if env:
        (tmp_path / ".env").write_text(env, encoding="utf-8")
    return Workspace(tmp_path)


TWO_ENDPOINTS = """
llm:
  generate: gen
  judge: strict
  endpoints:
    gen:
      base_url: http://localhost:11434/v1
      model: qwen2.5
      concurrency: 3
    strict:
      base_url: https://api.example.com/v1
      model: judge-large
      api_key_env: JUDGE_KEY
      price_input_per_mtok: 1.0
      price_output_per_mtok: 4.0
  prices:
    qwen2.5: {input_per_mtok: 0.1, output_per_mtok: 0.2}
"""


def test_nothing_configured_says_how(no_llm_env: None, tmp_path: Path) -> None:
    with pytest.raises(EndpointError) as err:
        resolve_endpoint(make_ws(tmp_path))
    text = str(err.value)
    assert "OPENAI_API_KEY" in text and "OPENAI_BASE_URL" in text and "GOLDSET_MODEL" in text
    assert "\n" not in text
    assert not endpoint_configured(make_ws(tmp_path))
    assert not endpoint_configured(None, "judge")


def test_env_only_local_server_needs_no_key(no_llm_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("GOLDSET_MODEL", "qwen2.5")
    ep = resolve_endpoint(None)
    assert (ep.base_url, ep.model) == ("http://localhost:11434/v1", "qwen2.5")
    assert not ep.api_key_set and ep.client_key() == PLACEHOLDER_KEY
    judge = resolve_endpoint(None, "judge")
    assert judge.model == "qwen2.5"  # no GOLDSET_JUDGE_MODEL: the generation model judges
    monkeypatch.setenv("GOLDSET_JUDGE_MODEL", "qwen2.5-judge")
    assert resolve_endpoint(None, "judge").model == "qwen2.5-judge"


def test_base_url_without_model_asks_for_the_model(no_llm_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:pw@localhost:8000/v1")
    with pytest.raises(EndpointError) as err:
        resolve_endpoint(None)
    assert "GOLDSET_MODEL" in str(err.value) and "pw" not in str(err.value)


def test_openai_key_alone_uses_default_model(no_llm_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abcdefghijklmnop")
    ep = resolve_endpoint(None)
    assert ep.base_url is None and ep.model == "gpt-4o-mini" and ep.api_key_set


def test_named_endpoints_roles_and_prices(no_llm_env: None, tmp_path: Path) -> None:
    ws = make_ws(tmp_path, TWO_ENDPOINTS, env="JUDGE_KEY=sk-judge-0123456789abcdef\n")
    gen = resolve_endpoint(ws, "generate")
    judge = resolve_endpoint(ws, "judge")
    assert (gen.name, gen.model, gen.settings.concurrency) == ("gen", "qwen2.5", 3)
    assert (judge.name, judge.model, judge.base_url) == ("strict", "judge-large", "https://api.example.com/v1")
    assert judge.api_key_set and judge.client_key() == "sk-judge-0123456789abcdef"
    # Price: the endpoint's own fields win; else the table by model; unknown → None (tokens only).
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=500_000)
    assert cost_usd(judge, usage) == pytest.approx(1.0 + 2.0)
    assert cost_usd(gen, usage) == pytest.approx(0.1 + 0.1)
    assert cost_usd(resolve_endpoint(ws, "generate", overrides={"model": "other"}), usage) is None
    # Command-line overrides win over the file; None means "not given".
    over = resolve_endpoint(ws, "generate", overrides={"concurrency": 11, "model": None})
    assert (over.settings.concurrency, over.model) == (11, "qwen2.5")


def test_key_never_in_repr_str_or_describe(no_llm_env: None, tmp_path: Path) -> None:
    ws = make_ws(tmp_path, TWO_ENDPOINTS, env="JUDGE_KEY=sk-judge-0123456789abcdef\n")
    judge = resolve_endpoint(ws, "judge")
    for text in (repr(judge), str(judge), str(judge.describe())):
        assert "0123456789abcdef" not in text


def test_config_model_beats_env_fill_in(fake_llm: object, tmp_path: Path) -> None:
    ws = make_ws(tmp_path, "llm:\n  endpoints:\n    main:\n      model: configured\n")
    assert resolve_endpoint(ws).model == "configured"  # GOLDSET_MODEL only fills a missing model
    assert resolve_endpoint(ws).name == "main"  # the only endpoint serves both roles
    assert resolve_endpoint(ws, "judge").model == "fake-judge"  # judging on it: GOLDSET_JUDGE_MODEL


def test_bad_config_names_the_field(no_llm_env: None, tmp_path: Path) -> None:
    ws = make_ws(tmp_path, "llm:\n  endpoints:\n    gen:\n      concurency: 3\n")
    with pytest.raises(ConfigError) as err:
        resolve_endpoint(ws)
    assert "llm.endpoints.gen.concurency" in str(err.value)
    ws = make_ws(tmp_path, "llm:\n  judge: nope\n  endpoints:\n    gen: {model: m}\n")
    with pytest.raises(ConfigError) as err:
        resolve_endpoint(ws, "judge")
    assert "'nope'" in str(err.value) and "gen" in str(err.value)
    with pytest.raises(ConfigError) as err:
        resolve_endpoint(None, overrides={"concurrency": 0})
    assert "concurrency" in str(err.value)


def test_redact() -> None:
    key = "sk-proj-AbCdEf0123456789XYZ"
    text = (
        f"Incorrect API key provided: sk-proj-****9XYZ. header Authorization: Bearer {key} "
        f"and api_key={key} and raw {key} and custom azure-key-1234567890"
    )
    out = redact(text, ["azure-key-1234567890", key])
    assert key not in out and "9XYZ" not in out and "azure-key-1234567890" not in out
    assert "Incorrect API key provided" in out  # the useful part of the message survives
    assert redact("nothing secret here") == "nothing secret here"


def test_template_example_is_valid_when_uncommented() -> None:
    """The commented llm example in the goldset.yaml template must stay in step with the settings model."""
    import re

    import yaml

    from goldset.llm import LLMSettings

    template = (Path(__file__).resolve().parent.parent / "goldset" / "_templates" / "goldset.yaml").read_text()
    block = template.split("\nllm:\n", 1)[1].split("\n\n", 1)[0]
    lines = [re.sub(r"^  # ", "  ", line) for line in block.splitlines() if line.startswith("  # ")]
    lines = [line for line in lines if not line.strip().startswith(("With no endpoints", "OPENAI_API_KEY (optional"))]
    data = yaml.safe_load("\n".join(lines))
    settings = LLMSettings.model_validate(data)
    assert settings.generate == "gen" and settings.judge == "judge"
    assert settings.endpoints["gen"].rpm == 500 and settings.endpoints["gen"].embedding_model
    assert settings.prices["gpt-4o"].output_per_mtok == 10.0
