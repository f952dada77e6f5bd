"""Request body parsers: strict JSON (no NaN, bounded nesting) and raw text for YAML uploads."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

# JSON nested deeper than this is refused before Python's recursion limit turns it into a 500.
MAX_JSON_DEPTH = 200


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _depth_ok(text: str, limit: int) -> bool:
    """Cheap pre-scan: the maximum bracket depth outside strings stays within ``limit``."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def loads_strict(raw: bytes | str) -> Any:
    """Parse JSON as Go's encoding/json would accept it; raise ParseError with line and column."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if not _depth_ok(text, MAX_JSON_DEPTH):
        raise ParseError(f"JSON is nested deeper than {MAX_JSON_DEPTH} levels (the limit).")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"Request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}."
        ) from exc
    except ValueError as exc:
        raise ParseError(f"Request body is not valid JSON: {exc}.") from exc


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
        try:
            return loads_strict(raw)
        except UnicodeDecodeError as exc:
            raise ParseError("Request body is not UTF-8.") from exc


class RawTextParser(BaseParser):
    """Hands the body over unparsed (bytes), for endpoints that read YAML or JSON themselves."""

    media_type = "*/*"

    def parse(  # type: ignore[override]  # DRF's stubs allow only mappings; bytes is the point here
        self, stream: Any, media_type: str | None = None, parser_context: Any = None
    ) -> bytes:
        if stream is None:
            return b""
        limit = settings.STUDIO_MAX_MANIFEST_BYTES
        data = stream.read(limit + 1)
        return bytes(data)
