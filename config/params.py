"""Numbers from URLs and query strings, checked before they reach the database.

A database integer column holds at most a signed 64-bit value (SQLite and PostgreSQL ``bigint``);
a larger number makes the driver raise ``OverflowError`` (a 500). ``str.isdigit`` also accepts
characters such as ``"²"`` that ``int()`` refuses. Both are answered here: a query parameter with
400, a path segment by not matching the route (404).
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.exceptions import BadRequest

# The largest signed 64-bit integer: the widest integer column of SQLite and PostgreSQL.
MAX_DB_INT = 2**63 - 1
_ASCII_DIGITS = re.compile(r"[0-9]{1,19}", re.ASCII)  # 19 digits: len(str(MAX_DB_INT))

# The word that stands for a graph's newest version wherever a version number goes.
LATEST: Final = "latest"
VersionRef = int | Literal["latest"]


def parse_db_int(raw: str) -> int | None:
    """``raw`` as a non-negative integer a database column can hold, else None."""
    if not _ASCII_DIGITS.fullmatch(raw):
        return None
    value = int(raw)
    return value if value <= MAX_DB_INT else None


def int_param(raw: str, name: str) -> int:
    """The query parameter ``name`` as a non-negative database integer; BadRequest (400) otherwise."""
    value = parse_db_int(raw.strip())
    if value is None:
        shown = raw if len(raw) <= 40 else raw[:40] + "…"
        raise BadRequest(
            f"{name} must be a whole number from 0 to {MAX_DB_INT}, got {shown!r}.",
            issues=[
                {
                    "code": "request.invalid-number",
                    "severity": "error",
                    "path": name,
                    "message": f"{shown!r} is not a number from 0 to {MAX_DB_INT}",
                }
            ],
        )
    return value


@extend_schema_field(OpenApiTypes.INT)
class DbIntegerField(serializers.Field):  # type: ignore[type-arg]
    """A query parameter (or body field) holding a non-negative database integer: the same check as
    ``int_param`` for filter serializers, refused with the issue code ``request.invalid-number``."""

    def to_internal_value(self, data: Any) -> int:
        raw = str(data)
        value = parse_db_int(raw.strip())
        if value is None:
            shown = raw if len(raw) <= 40 else raw[:40] + "…"
            raise serializers.ValidationError(
                f"{self.field_name} must be a whole number from 0 to {MAX_DB_INT}, got {shown!r}.",
                code="invalid-number",
            )
        return value

    def to_representation(self, value: int) -> int:
        return value


class DbIntConverter:
    """A path converter like ``<int:…>`` that matches only numbers a database column can hold, so
    that ``/api/environments/99999999999999999999/`` is a 404 rather than an ``OverflowError``."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = parse_db_int(value)
        if number is None:
            raise ValueError(value)  # Django's resolver: this route does not match
        return number

    def to_url(self, value: int) -> str:
        return str(value)


def parse_version_ref(raw: str) -> VersionRef | None:
    """``raw`` as a version number or ``LATEST`` (exactly the lower-case word), else None."""
    return LATEST if raw == LATEST else parse_db_int(raw)


@extend_schema_field({"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "enum": [LATEST]}]})
class VersionRefField(serializers.Field):  # type: ignore[type-arg]
    """A version number, or ``latest`` for the graph's newest version (the caller resolves it
    with the graph: graphs.selectors.version_number)."""

    def to_internal_value(self, data: Any) -> VersionRef:
        raw = str(data).strip()
        value = parse_version_ref(raw)
        if value is None:
            shown = raw if len(raw) <= 40 else raw[:40] + "…"
            raise serializers.ValidationError(
                f"{self.field_name} must be a version number or {LATEST!r}, got {shown!r}.",
                code="invalid-number",
            )
        return value

    def to_representation(self, value: VersionRef) -> VersionRef:
        return value


class VersionConverter:
    """The version segment of a URL: a number a database column can hold, or ``latest`` (the
    graph's newest version); anything else does not match the route (404)."""

    regex = f"(?:{LATEST}|[0-9]{{1,19}})"

    def to_python(self, value: str) -> VersionRef:
        ref = parse_version_ref(value)
        if ref is None:
            raise ValueError(value)  # Django's resolver: this route does not match
        return ref

    def to_url(self, value: VersionRef) -> str:
        return str(value)
