"""The Label Studio server, through label-studio-sdk 2.x: the only module that imports it.

:func:`connect` resolves the address (``review.label_studio.url``, else ``LABEL_STUDIO_URL``) and the token
(the variable ``review.label_studio.api_key_env`` names, ``LABEL_STUDIO_API_KEY`` by default; environment, then
the workspace's ``.env``), then checks both with one request, so an unreachable server or a wrong token is one
line naming the address before anything is read or written. The token never appears in a message.

The server does not deduplicate imports and accepts any result; idempotency (the pair id in the task data) and
validation (``review/config.py``) are goldset's. Annotations are read from the full JSON export (the one that
keeps skipped annotations and the results' own shapes; JSON_MIN and CSV do neither).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from goldset.errors import ConfigError, EndpointError, MissingExtra
from goldset.redaction import redact

if TYPE_CHECKING:
    from goldset.context import Context
    from goldset.review.settings import LabelStudioSettings

URL_ENV = "LABEL_STUDIO_URL"
#: What a plain ``pip install goldset`` lacks for the commands that talk to Label Studio.
INSTALL_HINT = "pip install 'goldset[review]'"
#: The ``model_version`` of goldset's predictions (the pre-filled texts and quote highlights of each task).
MODEL_VERSION = "goldset"
#: Task meta key holding the server time a task's text was last replaced by a push.
TEXT_AT = "goldset_text_at"


#: Request options for a POST that creates something: the SDK's automatic retry (on a dropped connection or a 5xx)
#: would create it twice when the first request did land.
ONCE: dict[str, Any] = {"max_retries": 0}


def public_url(url: str) -> str:
    """``url`` without user:password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def resolve(ctx: Context, settings: LabelStudioSettings, url: str | None = None) -> tuple[str, str]:
    """(url, api key) from the option, the settings and the environment; a missing one is a one-line error."""
    url = url or settings.url or ctx.getenv(URL_ENV)
    if not url:
        raise ConfigError(
            f"no Label Studio address: set {URL_ENV} (environment or .env) or review.label_studio.url "
            "(`goldset review export FILE` works without a server)"
        )
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"Label Studio address {url!r} must start with http:// or https://")
    key = ctx.getenv(settings.api_key_env)
    if not key:
        raise ConfigError(
            f"Label Studio at {public_url(url)}: no API token; set {settings.api_key_env} in the environment or .env "
            "(Label Studio: Account & Settings > Access Token)"
        )
    return url.rstrip("/"), key


def same_html(html: str) -> str:
    """``html`` as the server's sanitizer keeps it, for telling whether the instructions changed: it writes void
    tags without the slash (``<hr/>`` is stored as ``<hr>``)."""
    return " ".join(re.sub(r"\s*/>", ">", html).split())


def client_class() -> Any:
    """The SDK's client class; :class:`MissingExtra` (one line, exit 2) when label-studio-sdk is not installed
    (a plain ``pip install goldset``) or cannot be imported."""
    try:
        import label_studio_sdk  # noqa: F401  (lazy: 0.01 s)
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == "label_studio_sdk":
            raise MissingExtra(
                f"talking to Label Studio needs label-studio-sdk, which is not installed: {INSTALL_HINT} "
                "(or review without a server: `goldset review export FILE`)"
            ) from None
        raise MissingExtra(f"label-studio-sdk cannot be imported ({exc}); reinstall it: {INSTALL_HINT}") from None
    try:  # the generated client without the SDK's extensions (LabelInterface, pandas pagers): 1.3 s to load, not 4
        from label_studio_sdk.base_client import LabelStudioBase as Client
    except ImportError:  # pragma: no cover - a later SDK that moved it
        from label_studio_sdk import LabelStudio as Client
    return Client


def every(pager: Any) -> Iterator[Any]:
    """Every item of a paged listing. The server answers 404 "Invalid page" for the page after the last one, which
    the generated pager does not expect (the SDK's own extension does the same)."""
    from label_studio_sdk.core.api_error import ApiError

    try:
        yield from pager
    except ApiError as exc:
        if exc.status_code != 404:
            raise


@dataclass(frozen=True)
class TaskRef:
    id: int
    pair_id: str | None
    text_hash: str | None
    annotated: int


class LabelStudio:
    """One connection to one server. Methods raise :class:`EndpointError` (one line, naming the address)."""

    def __init__(self, url: str, api_key: str, *, timeout: float = 60.0) -> None:
        Client = client_class()
        self.url = url
        self.where = f"Label Studio at {public_url(url)}"
        self._key = api_key
        # Any: the SDK's generated types (role-dependent task unions, request TypedDicts) add nothing here.
        self.client: Any = Client(base_url=url, api_key=api_key, timeout=timeout)

    # -- errors ---------------------------------------------------------------------------------------------
    @contextmanager
    def _calls(self, doing: str) -> Iterator[None]:
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        try:
            yield
        except httpx.TimeoutException:
            raise EndpointError(f"{self.where}: timed out while {doing}; is it overloaded? (timeout_s)") from None
        except httpx.HTTPError as exc:
            raise EndpointError(
                f"{self.where}: cannot connect while {doing} ({type(exc).__name__}); start the server or fix "
                f"{URL_ENV} / review.label_studio.url"
            ) from None
        except ApiError as exc:
            status = exc.status_code
            if status in (401, 403):
                raise EndpointError(
                    f"{self.where} refused the API token (HTTP {status}) while {doing}; check LABEL_STUDIO_API_KEY "
                    "(or the variable review.label_studio.api_key_env names)"
                ) from None
            raise EndpointError(f"{self.where}: HTTP {status} while {doing}: {self._detail(exc.body)}") from None

    def _detail(self, body: Any) -> str:
        if isinstance(body, dict):
            body = body.get("validation_errors") or body.get("detail") or body
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
        return redact(" ".join(text.split()), [self._key])[:300]

    # -- calls ----------------------------------------------------------------------------------------------
    def check(self) -> str:
        """Reach the server and check the token; returns the user's e-mail."""
        with self._calls("checking the token"):
            me = self.client.users.whoami()
        return str(getattr(me, "email", "") or getattr(me, "username", ""))

    def find_project(self, title: str, project_id: int | None = None) -> int | None:
        """The project to use: ``project_id`` (must exist) or the one titled ``title`` (None when there is none)."""
        if project_id is not None:
            with self._calls(f"reading project {project_id}"):
                self.client.projects.get(id=project_id)
            return project_id
        with self._calls("listing projects"):
            found = [p.id for p in every(self.client.projects.list(title=title, page_size=100)) if p.title == title]
        if len(found) > 1:
            raise EndpointError(
                f"{self.where}: {len(found)} projects are titled {title!r} (ids {', '.join(map(str, found))}); "
                "set review.label_studio.project_id"
            )
        return found[0] if found else None

    def create_project(self, title: str, config: str, instructions: str, overlap: int) -> int:
        """Create the project, once: the SDK retries a request the server dropped or answered 5xx, which for a
        POST that did land makes a second project with the same title (seen under load). So no retry here; after a
        failure, a project with the title that appeared meanwhile is the one this call made."""
        try:
            return self._create_project(title, config, instructions, overlap)
        except EndpointError:
            found = self.find_project(title)
            if found is None:
                raise
            return found

    def _create_project(self, title: str, config: str, instructions: str, overlap: int) -> int:
        with self._calls("creating the project"):
            project = self.client.projects.create(
                title=title,
                label_config=config,
                expert_instruction=instructions,
                show_instruction=True,
                show_skip_button=True,
                maximum_annotations=overlap,
                show_collab_predictions=True,  # "use predictions to pre-label": the text areas start filled
                model_version=MODEL_VERSION,  # not checked on creation (an update is: see sync_project)
                request_options=ONCE,
            )
        return int(project.id)

    def sync_project(self, project_id: int, config: str, instructions: str, overlap: int, *,
                     predictions: bool) -> list[str]:  # fmt: skip
        """Bring the project's config, instructions and overlap in line with ours; returns what changed.
        ``predictions``: the project holds goldset's predictions, so it can be told to pre-label with them (the
        server refuses a ``model_version`` no prediction of the project has: a project made in the UI has none
        before the first import; see :meth:`use_predictions`)."""
        with self._calls(f"reading project {project_id}"):
            p = self.client.projects.get(id=project_id)
        changes: dict[str, Any] = {}
        if (p.label_config or "").strip() != config.strip():
            changes["label_config"] = config
        if same_html(p.expert_instruction or "") != same_html(instructions):
            changes["expert_instruction"] = instructions
            changes["show_instruction"] = True
        if p.maximum_annotations != overlap:
            changes["maximum_annotations"] = overlap
        if not p.show_collab_predictions:
            changes["show_collab_predictions"] = True
        if predictions and p.model_version != MODEL_VERSION:
            changes["show_collab_predictions"] = True
            changes["model_version"] = MODEL_VERSION
        if changes:
            with self._calls(f"updating project {project_id} ({', '.join(changes)})"):
                self.client.projects.update(id=project_id, **changes)
        return sorted(changes)

    def use_predictions(self, project_id: int) -> list[str]:
        """Pre-label with goldset's predictions (``model_version``), once the project has some; what changed."""
        with self._calls(f"reading project {project_id}"):
            p = self.client.projects.get(id=project_id)
        if p.model_version == MODEL_VERSION and p.show_collab_predictions:
            return []
        with self._calls(f"updating project {project_id} (model_version)"):
            self.client.projects.update(id=project_id, show_collab_predictions=True, model_version=MODEL_VERSION)
        return ["model_version"]

    def label_config(self, project_id: int) -> str:
        with self._calls(f"reading project {project_id}"):
            return str(self.client.projects.get(id=project_id).label_config or "")

    def tasks(self, project_id: int) -> list[TaskRef]:
        """Every task of the project: id, the pair id and text hash goldset put in its data."""
        out = []
        with self._calls(f"listing the tasks of project {project_id}"):
            # Only the fields we read: the full task serializer costs the server ~4x more.
            tasks = self.client.tasks.list(project=project_id, fields="task_only", include="id,data,total_annotations",
                                           page_size=1000)  # fmt: skip
            for t in every(tasks):
                data = t.data or {}
                out.append(TaskRef(id=int(t.id), pair_id=data.get("pair_id"), text_hash=data.get("text_hash"),
                                   annotated=int(t.total_annotations or 0)))  # fmt: skip
        return out

    def import_tasks(
        self, project_id: int, tasks: Sequence[dict[str, Any]], batch_size: int,
        on_batch: Callable[[int], None] | None = None,
    ) -> list[int]:  # fmt: skip
        """Import in batches; returns the new task ids. A batch either lands whole or not at all (server side)."""
        ids: list[int] = []
        for i in range(0, len(tasks), batch_size):
            batch = list(tasks[i : i + batch_size])
            with self._calls(f"importing tasks into project {project_id}"):
                # ONCE: a retried batch that had landed would import its tasks twice; a failed batch stops the push,
                # and the next push finds by pair id what did land.
                r = self.client.projects.import_tasks(id=project_id, request=batch, return_task_ids=True,
                                                      request_options=ONCE)  # fmt: skip
            ids.extend(int(t) for t in (r.task_ids or []))
            if on_batch is not None:
                on_batch(len(batch))
        return ids

    def replace_task(self, task_id: int, task: dict[str, Any]) -> None:
        """New data and goldset's prediction for an existing task; its meta records the server time of the
        change, so annotations made on the earlier text can be told apart."""
        with self._calls(f"updating task {task_id}"):
            updated = self.client.tasks.update(id=str(task_id), data=task["data"])
            for pred in list(self.client.predictions.list(task=task_id)):
                if pred.model_version == MODEL_VERSION and pred.id is not None:
                    self.client.predictions.delete(id=pred.id)
            for pred in task.get("predictions", []):
                self.client.predictions.create(
                    task=task_id, result=pred["result"], score=pred.get("score"),
                    model_version=pred.get("model_version"), request_options=ONCE,
                )  # fmt: skip
            at = updated.updated_at
            stamp = at.isoformat() if hasattr(at, "isoformat") else (str(at) if at else None)
            self.client.tasks.update(id=str(task_id), meta={**(updated.meta or {}), TEXT_AT: stamp})

    def export(self, project_id: int) -> list[dict[str, Any]]:
        """Every task with every annotation (skipped ones too): the full JSON export."""
        with self._calls(f"exporting project {project_id}"):
            raw = b"".join(
                self.client.projects.exports.download_sync(project_id, export_type="JSON", download_all_tasks=True)
            )
        try:
            data = json.loads(raw)
        except ValueError:
            raise EndpointError(f"{self.where}: the export of project {project_id} is not JSON") from None
        if not isinstance(data, list):
            raise EndpointError(f"{self.where}: the export of project {project_id} is not a list of tasks")
        return data

    def users(self) -> dict[int, str]:
        """User id -> e-mail (or username)."""
        with self._calls("listing users"):
            return {int(u.id): str(u.email or u.username or f"user {u.id}") for u in every(self.client.users.list())}


def connect(ctx: Context, settings: LabelStudioSettings, url: str | None = None) -> LabelStudio:
    """A checked connection (server reachable, token accepted); the SDK is checked first, then the settings."""
    client_class()
    base, key = resolve(ctx, settings, url)
    ls = LabelStudio(base, key, timeout=settings.timeout_s)
    ls.check()
    return ls
