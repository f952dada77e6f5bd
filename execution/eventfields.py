"""The vocabulary events are declared in (:mod:`execution.eventschema` declares them): field types,
fields, shapes of nested values, event types and families of events. Pure Python: no Django."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Type:
    """A JSON value's type, written the way TypeScript writes it (``number | null``, ``string[]``).

    Build them with the helpers below rather than by hand: :data:`STR`, :data:`INT`,
    :func:`nullable`, :func:`list_of`, :func:`one_of`, :func:`shape`.
    """

    ts: str

    def __str__(self) -> str:
        return self.ts


STR: Final = Type("string")
INT: Final = Type("number")  # an integer, but JSON (and TypeScript) know only numbers
FLOAT: Final = Type("number")
BOOL: Final = Type("boolean")
JSON: Final = Type("unknown")  # any JSON value
STR_PAIRS: Final = Type("[string, string][]")


def nullable(t: Type) -> Type:
    return Type(f"{t.ts} | null")


def list_of(t: Type) -> Type:
    inner = f"({t.ts})" if "|" in t.ts else t.ts
    return Type(f"{inner}[]")


def one_of(*values: str) -> Type:
    """One of a few strings (``"ok" | "error"``)."""
    return Type(" | ".join(f'"{v}"' for v in values))


@dataclass(frozen=True, slots=True)
class Field:
    """One key of an event's ``data``. ``optional``: the key may be absent (not only null)."""

    name: str
    type: Type
    doc: str
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Shape:
    """A named object type that fields refer to (a body view, a condition, a response).

    With a ``base``, it has the base's fields too (before its own ``fields``).
    """

    name: str
    doc: str
    fields: tuple[Field, ...]
    base: Shape | None = None

    def all_fields(self) -> tuple[Field, ...]:
        return (*self.base.all_fields(), *self.fields) if self.base is not None else self.fields

    @property
    def type(self) -> Type:
        return Type(self.name)


def shape(s: Shape) -> Type:
    return s.type


@dataclass(frozen=True, slots=True)
class EventType:
    """One event type: its ``type`` name, what it means, who writes it and its ``data`` fields."""

    name: str
    doc: str
    source: str  # engine | web | worker | reaper: who writes it
    fields: tuple[Field, ...]
    terminal: bool = False
    in_trace: bool = False  # the engine reports it too (every ``engine`` event is in its trace)

    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


@dataclass(frozen=True, slots=True)
class EventFamily:
    """The events of one kind of thing (a run), streamed on one channel and ended by one event.

    ``common`` fields come with every event of the family that comes from ``common_sources`` (the
    worker adds where a trace event happened to each one the engine reports).
    """

    name: str
    doc: str
    events: tuple[EventType, ...]
    shapes: tuple[Shape, ...] = ()
    common: tuple[Field, ...] = ()
    common_sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [e.name for e in self.events]
        if len(set(names)) != len(names):
            raise ValueError(f"event family {self.name}: an event type is declared twice")
        if sum(e.terminal for e in self.events) != 1:
            raise ValueError(f"event family {self.name}: exactly one event type must be terminal")
        for event in self.events:
            fields = [f.name for f in self.fields_of(event)]
            if len(set(fields)) != len(fields):
                raise ValueError(f"event {event.name}: a field is declared twice (or is a common one)")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.events)

    @property
    def terminal(self) -> str:
        return next(e.name for e in self.events if e.terminal)

    def get(self, name: str) -> EventType | None:
        return next((e for e in self.events if e.name == name), None)

    def trace_names(self) -> tuple[str, ...]:
        """The events the engine reports, in declaration order (its ``EVENT_TYPES``)."""
        return tuple(e.name for e in self.events if e.source == "engine" or e.in_trace)

    def fields_of(self, event: EventType) -> tuple[Field, ...]:
        """Every field of ``event``'s stored ``data``: the common ones (if any) and its own."""
        return (*self.common, *event.fields) if event.source in self.common_sources else event.fields
