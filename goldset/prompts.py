"""Prompt templates: files in the workspace's ``prompts/`` (seeded from the package defaults).

A template file ``prompts/<id>.md`` holds a system part and a user part separated by a line ``---user---``.
Variables are written ``$name`` or ``${name}`` (``string.Template``), so JSON braces in a prompt need no
escaping. The prompt id and the hash of the file's content go into each pair's provenance, and into the LLM
cache key through the rendered messages, so editing a prompt is a cache miss.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldset.errors import ConfigError, WorkspaceError
from goldset.hashing import short_hash

SEPARATOR = "---user---"


def defaults_dir(kind: str) -> Path:
    """The packaged defaults for ``prompts`` or ``labeling``.

    In an installed wheel they live in ``goldset/_defaults/<kind>``; in a source checkout (editable install)
    they are the repository's top-level folders, which are the single copy we maintain.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / "_defaults" / kind, here.parent / kind):
        if candidate.is_dir():
            return candidate
    raise WorkspaceError(f"goldset's default {kind}/ folder is missing from the installation; reinstall goldset")


@dataclass(frozen=True)
class Prompt:
    id: str
    system: str
    user: str
    hash: str
    path: Path

    def render(self, **variables: Any) -> list[dict[str, str]]:
        """Chat messages with the variables substituted; a missing variable is an error naming the prompt."""
        try:
            system = string.Template(self.system).substitute(variables)
            user = string.Template(self.user).substitute(variables)
        except KeyError as exc:
            raise ConfigError(
                f"{self.path}: template uses ${exc.args[0]}, which this task does not provide; "
                f"available: {', '.join(sorted(variables))}"
            ) from None
        except ValueError as exc:
            raise ConfigError(f"{self.path}: bad placeholder ({exc}); write a literal $ as $$") from None
        messages = [{"role": "system", "content": system.strip()}] if system.strip() else []
        messages.append({"role": "user", "content": user.strip()})
        return messages


def load_prompt(prompt_id: str, prompts_dir: Path | None = None) -> Prompt:
    """Load ``<prompt_id>.md`` from the workspace's prompts/ if given and present, else the default."""
    candidates = [prompts_dir / f"{prompt_id}.md"] if prompts_dir is not None else []
    candidates.append(defaults_dir("prompts") / f"{prompt_id}.md")
    for path in candidates:
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            system, sep, user = text.partition(f"\n{SEPARATOR}\n")
            if not sep:
                system, user = "", text
            return Prompt(id=prompt_id, system=system, user=user, hash=short_hash(text), path=path)
    raise ConfigError(f"prompt {prompt_id!r} not found in {candidates[0].parent}; restore it with `goldset init`")
