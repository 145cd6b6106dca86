"""Typed records over the JSON objects the native side writes: a frozen dataclass built from the
object by one converter that reads the field types, and the same object back on request.

A record keeps what it was not told about: a key the class has no field for lands in `extra`,
a key the object lacked stays out of `to_dict()`, and `to_dict()` gives the keys in the order
they came. So a key the native side adds later survives a round trip, and the JSON a record is
written as is the JSON it was built from."""

from __future__ import annotations

import copy
import dataclasses
import functools
import typing
import warnings
from typing import Any, Dict, Iterator, Type, TypeVar, Union

R = TypeVar("R", bound="Record")


def json_key(name: str) -> Dict[str, str]:
    """A field's metadata when its JSON key is not its name (a Python keyword: "from")."""
    return {"key": name}


class Record:
    """The methods of every record; the subclasses are frozen dataclasses (``repr=False``: the
    record's repr leaves out an empty `extra`) whose last field is ``extra: Dict[str, Any]``
    (the keys they have no field for)."""

    extra: Dict[str, Any]

    @classmethod
    def from_dict(cls: Type[R], data: Dict[str, Any]) -> R:
        """The record of the JSON object `data` (not changed; nothing of it is shared)."""
        given = {}
        for f, hint in _fields(cls):
            key = _key(f)
            given[f.name] = _from_json(hint, data[key]) if key in data else None
        known = {_key(f) for f, _ in _fields(cls)}
        extra = {k: copy.deepcopy(v) for k, v in data.items() if k not in known}
        out = cls(**given, extra=extra)  # type: ignore[call-arg]
        object.__setattr__(out, "_keys", tuple(data))  # which keys came, in their order
        return out

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object the record was built from: the same keys, order and values."""
        values = {_key(f): _to_json(getattr(self, f.name)) for f, _ in _fields(type(self))}
        values.update((k, copy.deepcopy(v)) for k, v in self.extra.items())
        order = getattr(self, "_keys", None)
        return values if order is None else {k: values[k] for k in order if k in values}

    def __repr__(self) -> str:  # the dataclass's, without an empty `extra`
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f, _ in _fields(type(self))]
        if self.extra:
            shown.append(f"extra={self.extra!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


class DeprecatedMapping:
    """Reading a record as the dict it used to be (``stats()["decode"]``): the values
    ``to_dict()`` has, with a DeprecationWarning the first time in the process for each
    class. To be removed in the release after the one that typed the records."""

    def __getitem__(self, key: str) -> Any:
        return self._as_dict(key)[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._as_dict(key).get(key, default)

    def keys(self) -> Any:
        return self._as_dict().keys()

    def items(self) -> Any:
        return self._as_dict().items()

    def values(self) -> Any:
        return self._as_dict().values()

    def __contains__(self, key: object) -> bool:
        return key in self._as_dict(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._as_dict())

    def _as_dict(self, key: object = None) -> Dict[str, Any]:
        assert isinstance(self, Record)
        name = type(self).__name__
        if name not in warned:
            warned.add(name)
            fields = {f.name for f, _ in _fields(type(self))}
            instead = f".{key}" if isinstance(key, str) and key in fields else "its attributes"
            warnings.warn(
                f"gpufeed: reading a {name} as a dict is deprecated and will be removed in the "
                f"next release: use {instead} or .to_dict()", DeprecationWarning, stacklevel=3)
        return self.to_dict()


warned: set = set()  # the classes whose dict reading has warned in this process


def _key(f: dataclasses.Field) -> str:
    return f.metadata.get("key", f.name)


@functools.lru_cache(maxsize=None)
def _fields(cls: type) -> tuple:
    """(field, its resolved type) of each of `cls`'s JSON keys (all but `extra`)."""
    hints = typing.get_type_hints(cls)
    return tuple((f, hints[f.name]) for f in dataclasses.fields(cls) if f.name != "extra")


def _from_json(hint: Any, value: Any) -> Any:
    """`value` as type `hint` says: records for objects of a record type, lists and maps of
    them; anything else (numbers, strings, untyped objects) as it is, copied."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union:
        inner = [a for a in args if a is not type(None)]
        return _from_json(inner[0], value) if len(inner) == 1 else copy.deepcopy(value)
    if isinstance(hint, type) and issubclass(hint, Record) and isinstance(value, dict):
        return hint.from_dict(value)
    if origin is list and args and isinstance(value, list):
        return [_from_json(args[0], v) for v in value]
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        return {k: _from_json(args[1], v) for k, v in value.items()}
    return copy.deepcopy(value)


def _to_json(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    return value  # a number, a string, a bool or None
