"""Settings precedence (option > environment > goldset.yaml > default) and secrets handling."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from goldset.config import get_secret, load_config, load_section
from goldset.errors import ConfigError, WorkspaceError
from goldset.workspace import Workspace, find_workspace


class Demo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_tokens: int = 700
    path: str = "docs"
    ks: list[int] = [1, 3]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "goldset.yaml").write_text("kb:\n  max_tokens: 500\n  path: kb\n", encoding="utf-8")
    return Workspace(tmp_path)


def test_precedence_option_env_file_default(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_section(ws, "kb", Demo) == Demo(max_tokens=500, path="kb")
    monkeypatch.setenv("GOLDSET_KB__MAX_TOKENS", "600")
    monkeypatch.setenv("GOLDSET_KB__KS", "[5, 10]")
    s = load_section(ws, "kb", Demo)
    assert (s.max_tokens, s.path, s.ks) == (600, "kb", [5, 10])
    s = load_section(ws, "kb", Demo, overrides={"max_tokens": 900, "path": None})
    assert (s.max_tokens, s.path) == (900, "kb"), "None means 'option not given'"


def test_unknown_setting_names_section_and_key(ws: Workspace) -> None:
    ws.config_path.write_text("kb:\n  max_tokns: 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"goldset.yaml: kb.max_tokns: unknown setting"):
        load_section(ws, "kb", Demo)


def test_invalid_value_is_a_config_error(ws: Workspace) -> None:
    ws.config_path.write_text("kb:\n  max_tokens: lots\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"kb.max_tokens"):
        load_section(ws, "kb", Demo)


def test_unknown_section_and_bad_yaml(ws: Workspace) -> None:
    ws.config_path.write_text("kbb:\n  x: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown section 'kbb'"):
        load_config(ws)
    ws.config_path.write_text("kb: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"goldset.yaml:\d+: not valid YAML"):
        load_config(ws)


def test_find_workspace_walks_up_and_fails_clearly(ws: Workspace, tmp_path_factory: pytest.TempPathFactory) -> None:
    sub = ws.root / "a" / "b"
    sub.mkdir(parents=True)
    found = find_workspace(sub)
    assert found is not None and found.root == ws.root.resolve()
    with pytest.raises(WorkspaceError, match="goldset init"):
        find_workspace(tmp_path_factory.mktemp("elsewhere"))


def test_secrets_come_from_env_then_dotenv(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    assert get_secret("MY_KEY", ws) is None
    ws.env_file.write_text("# comment\nexport MY_KEY='from-dotenv'\n", encoding="utf-8")
    assert get_secret("MY_KEY", ws) == "from-dotenv"
    monkeypatch.setenv("MY_KEY", "from-env")
    assert get_secret("MY_KEY", ws) == "from-env"


def test_a_shared_section_is_split_between_models(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    class Running(BaseModel):
        model_config = ConfigDict(extra="forbid")
        concurrency: int = 8

    ws.config_path.write_text("kb:\n  max_tokens: 500\n  concurrency: 3\n", encoding="utf-8")
    monkeypatch.setenv("GOLDSET_KB__CONCURRENCY", "4")
    assert load_section(ws, "kb", Running, only={"concurrency"}).concurrency == 4
    assert load_section(ws, "kb", Demo, exclude={"concurrency"}).max_tokens == 500


def test_validator_messages_lose_pydantics_prefix(ws: Workspace) -> None:
    from pydantic import field_validator

    class Checked(BaseModel):
        max_tokens: int = 1

        @field_validator("max_tokens")
        @classmethod
        def _positive(cls, v: int) -> int:
            if v <= 0:
                raise ValueError("must be positive; use e.g. 700")
            return v

    ws.config_path.write_text("kb:\n  max_tokens: -1\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_section(ws, "kb", Checked)
    assert "kb.max_tokens: must be positive" in str(err.value) and "Value error" not in str(err.value)
