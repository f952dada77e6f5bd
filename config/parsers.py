"""Request body parsers: strict JSON (no NaN, bounded nesting, no repeated keys, only storable text)
and raw text for YAML uploads."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from config.nesting import MAX_JSON_DEPTH, nesting_exceeds, too_deep_message
from graphs.language.storable import unstorable

__all__ = [
    "MAX_JSON_DEPTH",
    "BodyRefused",
    "BodyTooLarge",
    "RawTextParser",
    "StrictJSONParser",
    "loads_strict",
]


class BodyRefused(ParseError):
    """A request body that parses but cannot be accepted; ``issues`` say what and where."""

    def __init__(self, detail: str, issue: dict[str, Any]) -> None:
        super().__init__(detail)
        self.issues = [issue]


class BodyTooLarge(BodyRefused):
    """A body over the request limit (413); raised here, not from config.exceptions, which
    imports DRF's views and so cannot be imported while DRF reads its settings."""

    status_code = 413


class _Duplicate(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Duplicate
    return out


# Text that may hold a NUL or a surrogate: their JSON escapes, or (in text handed over as ``str``)
# the characters themselves. A surrogate pair matches too; the scan below tells pairs apart.
_MAY_BE_UNSTORABLE: Final = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})|[\x00\ud800-\udfff]")


def loads_strict(raw: bytes | str) -> Any:
    """Parse JSON as Go's encoding/json would accept it, minus what cannot be stored.

    Raises ParseError (line and column) for invalid JSON, NaN/Infinity and nesting past the
    limit, and ``BodyRefused`` (an issue with the path, line and column) for a key repeated in an
    object (which value counts would be a guess) and for a NUL character or a lone surrogate in
    any key or string (``graphs.language.storable``: no database column can hold them).
    """
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if nesting_exceeds(text):  # before json.loads, whose recursion a deep body would exhaust
        raise ParseError(too_deep_message("The request body"))
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except _Duplicate:
        value = None  # the scan below finds the key and says where
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"Request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}."
        ) from exc
    except ValueError as exc:
        raise ParseError(f"Request body is not valid JSON: {exc}.") from exc
    else:
        if not _MAY_BE_UNSTORABLE.search(text):
            return value
    problem = _first_problem(text)
    if problem is not None:
        raise problem
    return value


# A JSON string, a punctuation character, or any other scalar (numbers, true, false, null).
_TOKEN: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)


def _first_problem(text: str) -> BodyRefused | None:
    """The first repeated key or unstorable string of ``text`` (valid JSON up to that point).

    Runs only when ``json.loads`` found a repeated key or the text may hold an unstorable
    character, so the common body costs one regex search.
    """
    # Each open container: [is_object, path, keys seen, current key or index, expecting a key].
    stack: list[list[Any]] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        top = stack[-1] if stack else None
        if token in ("{", "["):
            stack.append([token == "{", _here(top), set(), None if token == "{" else 0, token == "{"])
        elif token in ("}", "]"):
            if stack:
                stack.pop()
        elif token == ",":
            if top is not None:
                if top[0]:
                    top[4] = True
                else:
                    top[3] += 1
        elif token == ":":
            if top is not None:
                top[4] = False
        elif token.startswith('"'):
            try:
                decoded = json.loads(token)
            except ValueError:
                return None  # past the point the parser stopped: nothing more to find
            if top is not None and top[0] and top[4]:
                key_problem = unstorable(decoded)
                if key_problem is not None:
                    return _refused("unstorable-text", f"A key holds {key_problem}.", top[1], text, match)
                if decoded in top[2]:
                    where = (*top[1], decoded)
                    return _refused(
                        "duplicate-key",
                        f"The key {json.dumps(decoded)} appears twice in one object; JSON objects may "
                        "not repeat a key (which value counts would be a guess).",
                        where,
                        text,
                        match,
                    )
                top[2].add(decoded)
                top[3] = decoded
            else:
                problem = unstorable(decoded)
                if problem is not None:
                    return _refused("unstorable-text", f"The text holds {problem}.", _here(top), text, match)
    return None


def _here(top: list[Any] | None) -> tuple[Any, ...]:
    return () if top is None else (*top[1], top[3])


def _refused(code: str, message: str, path: tuple[Any, ...], text: str, match: re.Match[str]) -> BodyRefused:
    offset = match.start()
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    dotted = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")
    where = f" ({dotted}, line {line} column {column})" if dotted else f" (line {line} column {column})"
    issue: dict[str, Any] = {"code": f"request.{code}", "severity": "error", "message": message}
    if dotted:
        issue["path"] = dotted
    issue.update(line=line, column=column)
    return BodyRefused(message.rstrip(".") + where + ".", issue)


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        # RequestSizeLimitMiddleware refuses a Content-Length over the limit; this read stops one
        # byte past it whatever the header said, so no body costs more memory than the limit.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = (stream.read(limit + 1) if limit is not None else stream.read()) if stream is not None else b""
        if limit is not None and len(raw) > limit:
            detail = f"Request body is over the limit of {limit} bytes (STUDIO_MAX_REQUEST_BYTES)."
            raise BodyTooLarge(detail, {"code": "request.too-large", "severity": "error", "message": detail})
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


class YamlTextParser(RawTextParser):
    """A YAML body (``application/yaml``), handed over as bytes for graphs.language's own reader, which
    keeps every line and column; its size is checked there (``STUDIO_MAX_MANIFEST_BYTES``)."""

    media_type = "application/yaml"


class LegacyYamlTextParser(YamlTextParser):
    """``application/x-yaml``, the name YAML went by before RFC 9512 registered application/yaml."""

    media_type = "application/x-yaml"


class TextYamlParser(YamlTextParser):
    """``text/yaml``, as some clients (and ``curl --data-binary`` scripts) label it."""

    media_type = "text/yaml"


YAML_PARSERS: list[type[BaseParser]] = [YamlTextParser, LegacyYamlTextParser, TextYamlParser]
