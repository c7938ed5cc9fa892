"""Events as text, for the shared event log (graph.event_log), and back.

A `MemoryEvent` crosses processes as one JSON string: the memories and the
relationship it carries field by field, times as ISO 8601, enums by value.
Pure: no I/O, its own unit tests. The sequence number and `missed` are not
part of the payload; the log and the receiving process set them. `without`
takes an erased memory's content out of an event (deleteMemory).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from datetime import datetime
from enum import Enum
from typing import Any

from memlattice.graph.codec import Edge, Memory
from memlattice.services.events import EventKind, MemoryEvent


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """`cls`'s resolved field types, worked out once per class."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _typed(hint: Any, value: Any) -> Any:
    """`value` as read from JSON, turned back into `hint`'s type."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _typed(options[0], value) if len(options) == 1 else value
    if origin is tuple:
        (item, *_) = typing.get_args(hint)
        return tuple(_typed(item, v) for v in value)
    if hint is datetime:
        return datetime.fromisoformat(value)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint, value)
    return value


def _dataclass(cls: type[Any], data: dict[str, Any]) -> Any:
    hints = _hints(cls)
    return cls(**{f.name: _typed(hints[f.name], data[f.name])
                  for f in dataclasses.fields(cls) if f.name in data})


def erased(memory: Memory) -> Memory:
    """A snapshot of an erased memory: what a subscription matches it by (ids, tags,
    type, scope, sensitivity, status) and nothing of what it said."""
    return dataclasses.replace(memory, content="", key=None, value=None, summary=None,
                               metadata={}, provenance=None, source=None)


def without(event: MemoryEvent, memory_id: str) -> MemoryEvent:
    """`event` with every snapshot of `memory_id` erased."""
    def clean(m: Memory) -> Memory:
        return erased(m) if m.id == memory_id else m

    return dataclasses.replace(
        event, memory=clean(event.memory) if event.memory is not None else None,
        endpoints=tuple(map(clean, event.endpoints)), related=tuple(map(clean, event.related)))


def encode(event: MemoryEvent) -> str:
    """The event as one JSON string, without its `seq` and `missed`."""
    data = _plain(event)
    del data["seq"], data["missed"]
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def decode(payload: str, seq: int) -> MemoryEvent:
    """An event read from the log, numbered `seq`."""
    event: MemoryEvent = _dataclass(MemoryEvent, json.loads(payload))
    return dataclasses.replace(event, seq=seq)


__all__ = ["Edge", "EventKind", "Memory", "decode", "encode", "erased", "without"]
