"""The base of every stored record."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


def utcnow() -> datetime:
    """Timestamps are timezone-aware UTC, to the second, so files diff cleanly."""
    return datetime.now(UTC).replace(microsecond=0)


class Record(BaseModel):
    """The base of every record goldset stores. Strict about unknown fields (a typo in a hand-edited file is an
    error, not silently lost data), and versioned so a later goldset can migrate or refuse an older file knowingly."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's format.")


class AllFields(set[str]):
    """The ``model_fields_set`` of a record every field of which was given (every record read from a file: files
    write every field), one object shared by all such records of a model, and by their copies (``__copy__``
    returns it: ``model_copy`` copies the fields set of each copy it makes).

    50,000 pairs read hold ~250,000 models, each with a set of its field names, ~2.4 KB a pair in all. Adding a
    field of the model is a no-op (it is there already); anything else that would change the set raises, since it
    would change it for every record sharing it.
    """

    __slots__ = ()

    def __copy__(self) -> AllFields:
        return self

    def _frozen(self, *_: object) -> None:
        raise TypeError("the fields set shared by complete records cannot change")

    def add(self, name: str) -> None:
        if name not in self:
            self._frozen()

    def update(self, *others: Iterable[str]) -> None:
        if any(n not in self for other in others for n in other):
            self._frozen()

    def __ior__(self, other: AbstractSet[str]) -> AllFields:  # type: ignore[override,misc]
        self.update(other)
        return self

    discard = remove = pop = clear = difference_update = intersection_update = symmetric_difference_update = _frozen  # type: ignore[assignment]
    __isub__ = __iand__ = __ixor__ = _frozen  # type: ignore[assignment]


def share_fields_set(model: BaseModel) -> BaseModel:
    """``model`` with its ``model_fields_set`` replaced by its class's :class:`AllFields` when every field was given
    (a model validator of the pair records calls it on every record validated)."""
    shared = all_fields(type(model))
    if len(model.__pydantic_fields_set__) == len(shared) and model.__pydantic_fields_set__ is not shared:
        object.__setattr__(model, "__pydantic_fields_set__", shared)
    return model


def all_fields(cls: type[BaseModel]) -> AllFields:
    """The :class:`AllFields` every complete record of ``cls`` shares."""
    shared = _ALL_FIELDS.get(cls)
    if shared is None:
        shared = _ALL_FIELDS[cls] = AllFields(cls.model_fields)
    return shared


_ALL_FIELDS: dict[type[BaseModel], AllFields] = {}
