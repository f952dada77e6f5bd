"""Request body parsers: strict JSON (no NaN, bounded nesting) and raw text for YAML uploads."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from config.nesting import MAX_JSON_DEPTH, nesting_exceeds, too_deep_message

__all__ = ["MAX_JSON_DEPTH", "RawTextParser", "StrictJSONParser", "loads_strict"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads_strict(raw: bytes | str) -> Any:
    """Parse JSON as Go's encoding/json would accept it; raise ParseError with line and column."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if nesting_exceeds(text):  # before json.loads, whose recursion a deep body would exhaust
        raise ParseError(too_deep_message("The request body"))
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
