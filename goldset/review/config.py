"""The Label Studio labeling config: which controls it has, which values they allow, and whether a result fits.

The server stores any result it is sent (a choice the config does not have, a control that does not exist), so
goldset checks every annotation result against the config itself before using it. A choice is named by its
alias (what the UI stores) or its displayed value, in any case (:meth:`Control.stored`). goldset reads results by
the control names documented in ``labeling/review.xml``: ``verdict`` (required), ``criteria``,
``edited_question``, ``edited_answer``, ``comment``; the task data it fills are :data:`DATA_FIELDS`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldset.errors import ConfigError

#: The task data goldset fills; a config may show any of them as ``$name``.
DATA_FIELDS = ("pair_id", "question", "answer", "question_type", "language", "evidence", "flags", "meta", "doc")
VERDICTS = ("accept", "reject", "edit")
VERDICT, CRITERIA, EDITED_QUESTION, EDITED_ANSWER, COMMENT, QUOTE = (
    "verdict", "criteria", "edited_question", "edited_answer", "comment", "quote",
)  # fmt: skip
#: Control tags whose results carry a list of values from the config (the value key of their results).
VALUED = {"Choices": "choices", "Labels": "labels", "Taxonomy": "taxonomy"}
#: Tags that show data (objects); everything with a ``toName`` is a control.
_VARIABLE = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")


def fold(text: str) -> str:
    """``text`` for a lenient comparison: case and runs of white space ignored."""
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class Control:
    name: str
    tag: str
    to_names: tuple[str, ...]
    values: tuple[str, ...] = ()  # stored values (a Choice's alias when it has one)
    multiple: bool = False
    #: (spelling, stored value) of each Choice / Label: its alias and its displayed value both name it
    spellings: tuple[tuple[str, str], ...] = ()

    @property
    def result_type(self) -> str:
        """The ``type`` of this control's results (``Choices`` -> ``choices``)."""
        return self.tag.lower()

    def stored(self, given: str) -> str | None:
        """The value this control's results store for ``given`` (a Choice's alias, else its value), ``given`` being
        the alias or the displayed value: exactly, else ignoring case and white space when that names one choice.
        Label Studio's UI stores the alias, a script posting results may send the displayed text; both are one
        choice. None when ``given`` names no choice (or, ignoring case, several)."""
        for spelling, value in self.spellings:
            if spelling == given:
                return value
        found = {value for spelling, value in self.spellings if fold(spelling) == fold(given)}
        return found.pop() if len(found) == 1 else None

    def choices_text(self) -> str:
        """The choices for a message: ``accept ("Accept"), reject ("Reject")``."""
        shown = dict(reversed([(v, s) for s, v in self.spellings if s != v]))
        return ", ".join(f"{v} ({shown[v]!r})" if v in shown else v for v in self.values)


@dataclass(frozen=True)
class LabelConfig:
    xml: str
    source: str  # the file (or "project N") it came from, for messages
    controls: dict[str, Control] = field(default_factory=dict)
    objects: dict[str, str] = field(default_factory=dict)  # name -> tag (Text, HyperText, ...)
    shows: dict[str, str] = field(default_factory=dict)  # object name -> the data field it shows ($evidence)
    variables: frozenset[str] = frozenset()

    def check_for_goldset(self) -> None:
        """The controls and data goldset relies on are there; raise :class:`ConfigError` naming what is not."""
        unknown = sorted(self.variables - set(DATA_FIELDS))
        if unknown:
            raise ConfigError(
                f"{self.source}: ${unknown[0]} is not task data goldset fills; use one of "
                + ", ".join(f"${f}" for f in DATA_FIELDS)
            )
        verdict = self.controls.get(VERDICT)
        if verdict is None or verdict.tag != "Choices":
            raise ConfigError(f"{self.source}: needs a <Choices name=\"verdict\"> with accept, reject and edit")
        missing = [v for v in VERDICTS if verdict.stored(v) is None]
        if missing:
            raise ConfigError(
                f"{self.source}: verdict has no choice {missing[0]!r} (value or alias); it needs accept, reject, edit"
            )
        for name in (EDITED_QUESTION, EDITED_ANSWER, COMMENT):
            c = self.controls.get(name)
            if c is not None and c.tag != "TextArea":
                raise ConfigError(f"{self.source}: {name} must be a <TextArea>, it is a <{c.tag}>")
        c = self.controls.get(CRITERIA)
        if c is not None and c.tag != "Choices":
            raise ConfigError(f"{self.source}: criteria must be <Choices>, it is a <{c.tag}>")

    def problem(self, item: Any) -> str | None:
        """Why one annotation result item does not fit this config; None when it does."""
        if not isinstance(item, dict):
            return "a result item is not an object"
        name = item.get("from_name")
        control = self.controls.get(name) if isinstance(name, str) else None
        if control is None:
            return f"result for {name!r}, which is not a control of the config"
        if item.get("to_name") not in control.to_names:
            return f"{name}: result targets {item.get('to_name')!r}, the config says {'/'.join(control.to_names)}"
        if item.get("type") != control.result_type:
            return f"{name}: result of type {item.get('type')!r}; a <{control.tag}> gives {control.result_type!r}"
        value = item.get("value")
        if not isinstance(value, dict):
            return f"{name}: result has no value"
        key = VALUED.get(control.tag)
        if key is not None:
            got = value.get(key)
            if not isinstance(got, list) or not all(isinstance(v, str) for v in got):
                return f"{name}: {key} is not a list of strings"
            if control.tag != "Taxonomy":
                bad = [v for v in got if control.stored(v) is None]
                if bad:
                    return f"{name}: {bad[0]!r} is not one of its choices: {control.choices_text()}"
            if not control.multiple and control.tag == "Choices" and len(got) > 1:
                return f"{name}: {len(got)} choices for a single-choice control"
        if control.tag == "TextArea":
            text = value.get("text")
            if not isinstance(text, list | str):
                return f"{name}: text is not a string or a list of strings"
        return None


def parse(xml: str, source: str) -> LabelConfig:
    """Parse a labeling config; a malformed one is a :class:`ConfigError` naming ``source``."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ConfigError(f"{source}: not valid XML ({exc}); fix the labeling config") from None
    controls: dict[str, Control] = {}
    objects: dict[str, str] = {}
    shows: dict[str, str] = {}
    variables: set[str] = set()
    for el in root.iter():
        for value in el.attrib.values():
            m = _VARIABLE.match(value.strip())
            if m:
                variables.add(m.group(1))
        name = el.get("name")
        if not name:
            continue
        to_name = el.get("toName")
        if to_name is None:
            objects[name] = el.tag
            m = _VARIABLE.match((el.get("value") or "").strip())
            if m:
                shows[name] = m.group(1)
            continue
        items = [child for child in el.iter() if child is not el and child.tag in ("Choice", "Label")]
        values = tuple(child.get("alias") or child.get("value") or "" for child in items)
        spellings = tuple(
            (spelling, stored)
            for child, stored in zip(items, values, strict=True)
            for spelling in dict.fromkeys((child.get("alias"), child.get("value")))
            if spelling
        )
        if name in controls:
            raise ConfigError(f"{source}: two controls are named {name!r}; give each its own name")
        controls[name] = Control(
            name=name,
            tag=el.tag,
            to_names=tuple(t.strip() for t in to_name.split(",") if t.strip()),
            values=values,
            spellings=spellings,
            multiple=el.get("choice", "single") == "multiple" or el.tag == "Labels",
        )
    for c in controls.values():
        for t in c.to_names:
            if t not in objects:
                raise ConfigError(f"{source}: control {c.name!r} points at toName={t!r}, which is not in the config")
    return LabelConfig(
        xml=xml, source=source, controls=controls, objects=objects, shows=shows, variables=frozenset(variables)
    )


def load(path: Path) -> LabelConfig:
    """Read and check the config file goldset pushes (``review.label_studio.config_file``)."""
    path = Path(path)
    try:
        xml = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: labeling config not found; run `goldset init` to restore the default, or set "
            "review.label_studio.config_file"
        ) from None
    config = parse(xml, str(path))
    config.check_for_goldset()
    return config
