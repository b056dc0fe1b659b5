"""A real Label Studio server for the review tests, and what a reviewer does in it (through the API).

Launcher (``make test`` runs the suite under it)::

    python -m tests.helpers.labelstudio [--ls-bin PATH] -- COMMAND...

Unless ``LABEL_STUDIO_URL`` and ``LABEL_STUDIO_API_KEY`` already point at a server, it starts
``label-studio start --no-browser`` from its own virtualenv (``.ls-venv``; the server pins an old openai, so it
cannot share goldset's) on a free port of 127.0.0.1 with a fresh data dir and a preset legacy token, waits for
``/health`` and for the token to work (a first start migrates a new database: about 70 s), runs COMMAND with the
address and token in its environment, and always stops the server. Label Studio moves silently to the next
port when its port is busy, so the launcher checks that the server it reached is the one it started.

Tests call :func:`require_server`: without a server they fail with one line saying how to start one (they never
skip). Annotators are users made through the API (:func:`make_user`); annotations are posted as them
(``completed_by``), as a reviewer's browser would post them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BIN = ROOT / ".ls-venv" / "bin" / "label-studio"
USER = "ci@example.com"
PASSWORD = "ci-password-123"
TOKEN = "0123456789abcdef0123456789abcdef01234567"
HOW_TO = (
    "the review integration tests need a Label Studio server: run them with `make test`, or "
    "`python -m tests.helpers.labelstudio -- python -m pytest ...`, or set LABEL_STUDIO_URL and "
    "LABEL_STUDIO_API_KEY to a running server"
)


@dataclass(frozen=True)
class Server:
    url: str
    api_key: str
    user: str = USER
    password: str = PASSWORD

    def client(self) -> Any:
        from label_studio_sdk import LabelStudio

        return LabelStudio(base_url=self.url, api_key=self.api_key)


def require_server() -> Server:
    """The server the environment names; fails the test (never skips) when there is none or it does not answer."""
    import pytest

    url, key = os.environ.get("LABEL_STUDIO_URL"), os.environ.get("LABEL_STUDIO_API_KEY")
    if not url or not key:
        pytest.fail(HOW_TO, pytrace=False)
    if not _healthy(url):
        pytest.fail(f"Label Studio at {url} does not answer /health; {HOW_TO}", pytrace=False)
    return Server(url.rstrip("/"), key, os.environ.get("LABEL_STUDIO_TEST_USER", USER),
                  os.environ.get("LABEL_STUDIO_TEST_PASSWORD", PASSWORD))  # fmt: skip


# -- what a reviewer does ----------------------------------------------------------------------------------------
def make_user(ls: Any, name: str) -> int:
    """A user (an annotator) with this name, made once; returns its id."""
    email = f"{name}@example.com"
    for u in ls.users.list():
        if u.email == email:
            return int(u.id)
    return int(ls.users.create(username=name, email=email, password="reviewer-pass-123").id)


def choices(name: str, *values: str, to: str = "question") -> dict[str, Any]:
    return {"from_name": name, "to_name": to, "type": "choices", "value": {"choices": list(values)}}


def textarea(name: str, text: str, to: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [text]}}


def annotate(ls: Any, task_id: int, result: list[dict[str, Any]], *, user: int | None = None,
             cancelled: bool = False) -> int:  # fmt: skip
    """Post an annotation as ``user`` (a skip when ``cancelled``); returns its id."""
    kwargs: dict[str, Any] = {"id": task_id, "result": result, "was_cancelled": cancelled}
    if user is not None:
        kwargs["completed_by"] = user
    return int(ls.annotations.create(**kwargs).id)


def tasks_by_pair(ls: Any, project: int) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for t in ls.tasks.list(project=project, fields="all", page_size=1000):
        out.setdefault(t.data.get("pair_id"), []).append(t)
    return out


#: The labeling config of a project made in the UI from the "Text Classification" template, before goldset's.
UI_CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Choices name="sentiment" toName="text" choice="single" showInline="true">
    <Choice value="Positive"/><Choice value="Negative"/><Choice value="Neutral"/>
  </Choices>
</View>"""


def ui_project(server: Server, title: str) -> int:
    """A project made as Label Studio's UI makes one (a bare POST: title and the template's config; no
    model_version, no predictions); returns its id."""
    body = json.dumps({"title": title, "label_config": UI_CONFIG}).encode()
    req = urllib.request.Request(server.url + "/api/projects/", data=body, method="POST", headers={
        "Authorization": f"Token {server.api_key}", "Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=30) as r:
        return int(json.loads(r.read())["id"])


def project_id(ls: Any, title: str) -> int:
    found = [p.id for p in ls.projects.list(title=title) if p.title == title]
    if len(found) != 1:
        raise AssertionError(f"expected one project titled {title!r}, found {found}")
    return int(found[0])


# -- the launcher ------------------------------------------------------------------------------------------------
def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/health", timeout=3) as r:
            return r.status == 200 and b"UP" in r.read()
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _token_works(url: str, key: str) -> bool:
    req = urllib.request.Request(url + "/api/current-user/whoami", headers={"Authorization": f"Token {key}"})
    try:
        with urllib.request.urlopen(req, timeout=3) as r:
            return r.status == 200 and json.loads(r.read()).get("email") == USER
    except (urllib.error.URLError, OSError, ValueError):
        return False


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(data_dir: Path) -> dict[str, str]:
    """The environment of the server: ours, and none of the caller's Label Studio settings (the server also
    reads bare USERNAME / PASSWORD)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LABEL_STUDIO_", "HEARTEX_")) and k not in ("USERNAME", "PASSWORD")}  # fmt: skip
    env.update({
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "LABEL_STUDIO_USERNAME": USER,
        "LABEL_STUDIO_PASSWORD": PASSWORD,
        "LABEL_STUDIO_USER_TOKEN": TOKEN,
        "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
        "LATEST_VERSION_CHECK": "false",
    })  # fmt: skip
    return env


@contextlib.contextmanager
def started(ls_bin: Path, *, timeout: float = 300.0, log: Path | None = None) -> Any:
    """Start a server on a free port with a fresh data dir; yield (Server, seconds to ready); always stop it."""
    if not ls_bin.exists():
        raise SystemExit(f"labelstudio: {ls_bin} not found; `make setup` installs Label Studio into .ls-venv")
    data_dir = Path(tempfile.mkdtemp(prefix="goldset-ls-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = log or data_dir / "server.log"
    t0 = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(ls_bin), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port)],
            env=server_env(data_dir), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"labelstudio: the server exited ({proc.returncode}); see {log}")
                text = log.read_text(errors="replace")
                if "is in use" in text:
                    raise SystemExit(f"labelstudio: port {port} was taken before the server started; run again")
                if _healthy(url) and _token_works(url, TOKEN):
                    break
                if time.monotonic() - t0 > timeout:
                    raise SystemExit(f"labelstudio: not ready after {timeout:.0f} s; see {log}")
                time.sleep(0.5)
            yield Server(url, TOKEN), time.monotonic() - t0
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if os.environ.get("GOLDSET_KEEP_LS_DATA") != "1":
                shutil.rmtree(data_dir, ignore_errors=True)


def stop_on_sigterm() -> None:
    """A TERM (CI cancelling the job, `kill`) unwinds like Ctrl-C, so the server is stopped on the way out."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def main(argv: list[str]) -> int:
    stop_on_sigterm()
    ls_bin = Path(os.environ.get("LABEL_STUDIO_BIN") or DEFAULT_BIN)
    if argv[:1] == ["--ls-bin"]:
        ls_bin, argv = Path(argv[1]), argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: python -m tests.helpers.labelstudio [--ls-bin PATH] -- COMMAND...", file=sys.stderr)
        return 2
    if os.environ.get("LABEL_STUDIO_URL") and os.environ.get("LABEL_STUDIO_API_KEY"):
        print(f"labelstudio: using the server at {os.environ['LABEL_STUDIO_URL']}", file=sys.stderr)
        return subprocess.call(argv)
    with started(ls_bin) as (server, seconds):
        print(f"labelstudio: started at {server.url} in {seconds:.1f} s (fresh data dir)", file=sys.stderr)
        env = {**os.environ, "LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.api_key}
        return subprocess.call(argv, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
