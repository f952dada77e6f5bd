r"""Header propagation as KServe's router does it (docs/router-semantics.md, "Outbound calls").

Incoming header names are canonicalised like Go's ``textproto.CanonicalMIMEHeaderKey``
(``x-request-id`` -> ``X-Request-Id``), then matched *unanchored* and *case-sensitively* against
each pattern. Patterns are Go regular expressions (``regexp.Compile``, RE2 syntax) in KServe. We
compile them with RE2 (``google-re2``) and refuse, as Go 1.19 does, the three things RE2 C++
accepts and Go does not: ``\C``, ``(?<name>…)`` and capture groups nested more than 1,000 deep
(checked against KServe's router itself: ``tests/engine/data/oracle_patterns.json``).
Invalid patterns are skipped, with Go's error text; the others still apply.

The pattern list is ``PROPAGATE_HEADERS`` split on every ``,`` (Go's ``strings.Split``): an empty
entry (a trailing comma) is a valid pattern that matches every header name. :func:`split_patterns`
does that split for every way in.

Deliberate deviation: a pattern whose RE2 program exceeds RE2's default 8 MiB budget (such as
``\pL{1000}``, which Go accepts) is skipped as too large; compiling it would take seconds and
hundreds of megabytes per worker.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

import re2

__all__ = [
    "CompiledPatterns",
    "HeaderPattern",
    "PatternError",
    "canonical_header_key",
    "compile_go_pattern",
    "compile_patterns",
    "is_exact_header_name",
    "normalise_headers",
    "propagated_headers",
    "propagated_headers_exact",
    "split_patterns",
]

logger = logging.getLogger(__name__)

# RFC 7230 token characters: Go canonicalises only names made of these.
_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Go never forwards Host (the server strips it from req.Header), and its client ignores the framing
# headers in Header (reqWriteExcludeHeader). httpx would honour them and corrupt the request, so we
# drop them. Go does forward Connection, Keep-Alive, Te, Upgrade and Proxy-Connection (checked
# against the oracle, tests/engine/data/oracle_headers.json), and so do we.
_NEVER_FORWARDED = frozenset({"Host", "Content-Length", "Transfer-Encoding", "Trailer"})

# Go 1.19 regexp/syntax maxHeight: a parse tree deeper than this is "expression nests too deeply".
_GO_MAX_HEIGHT: Final = 1000

# RE2 C++'s error texts -> Go regexp/syntax's ErrorCode texts (the argument follows in backticks).
_GO_CODES: Final = (
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("missing ]", "missing closing ]"),
    ("missing )", "missing closing )"),
    ("unexpected )", "unexpected )"),
    ("missing argument to repetition operator", "missing argument to repetition operator"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid named capture group", "invalid named capture"),
    ("duplicate capture group name", "duplicate capture group name"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("invalid UTF-8", "invalid UTF-8"),
    ("pattern too large - compile failed", "expression too large"),
)


class HeaderPattern(Protocol):
    """A compiled pattern: what propagation needs of it."""

    @property
    def pattern(self) -> str: ...

    @property
    def programsize(self) -> int: ...

    def search(self, text: str) -> object: ...


class PatternError(ValueError):
    """A pattern Go's ``regexp.Compile`` refuses; the message is Go's error text."""


def canonical_header_key(name: str) -> str:
    """Go's ``CanonicalMIMEHeaderKey``: ``content-type`` -> ``Content-Type``.

    A name containing a character that is not a token character is returned unchanged, as in Go.
    """
    if not name or any(ch not in _TOKEN_CHARS for ch in name):
        return name
    out: list[str] = []
    upper = True
    for ch in name:
        out.append(ch.upper() if upper else ch.lower())
        upper = ch == "-"
    return "".join(out)


def split_patterns(value: str) -> tuple[str, ...]:
    """``PROPAGATE_HEADERS`` as KServe's router reads it: Go's ``strings.Split(value, ",")``.

    Every entry is kept, empty ones included (``"A,"`` is ``("A", "")``, and ``""`` is ``("",)``:
    an empty pattern matches every header). Use it for every text form of the list.
    """
    return tuple(value.split(","))


def _go_error(message: str) -> str:
    """Go's ``error parsing regexp: <code>: `<arg>``` for an RE2 C++ error message."""
    for ours, theirs in _GO_CODES:
        if message.startswith(ours):
            arg = message[len(ours) :].removeprefix(":").strip()
            return f"error parsing regexp: {theirs}: `{arg}`"
    return f"error parsing regexp: {message}"


def _go_only_refusals(pattern: str) -> str | None:
    r"""What Go 1.19 refuses that RE2 C++ accepts: ``\C``, ``(?<``, captures nested too deep."""
    depth = 0
    deepest = 0
    stack: list[bool] = []  # per open group: is it a capture?
    in_class = False
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            if pattern[i + 1] == "C":
                return "error parsing regexp: invalid escape sequence: `\\C`"
            i = _past_escape(pattern, i)
        elif in_class:
            i, in_class = _class_step(pattern, i)
        elif ch == "[":
            i, in_class = _class_start(pattern, i), True
        else:
            if ch == "(":
                if pattern.startswith("(?<", i):
                    return "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"
                capture = not pattern.startswith("(?", i) or pattern.startswith("(?P<", i)
                stack.append(capture)
                depth += capture
                deepest = max(deepest, depth)
            elif ch == ")" and stack:
                depth -= stack.pop()
            i += 1
    if deepest + 1 > _GO_MAX_HEIGHT:  # each capture is one tree level above its contents
        return "error parsing regexp: expression nests too deeply: `" + pattern + "`"
    return None


def _past_escape(pattern: str, i: int) -> int:
    """Past the escape at ``pattern[i]`` (a backslash with a next character); ``\\Q…\\E`` is
    literal text, escapes and all."""
    if pattern[i + 1] == "Q":
        end = pattern.find("\\E", i + 2)
        return len(pattern) if end < 0 else end + 2
    return i + 2


def _class_start(pattern: str, i: int) -> int:
    """Past a class's '[' and its leading '^' and literal ']'."""
    i += 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):  # a leading ] is a literal
        i += 1
    return i


def _class_step(pattern: str, i: int) -> tuple[int, bool]:
    """One step inside a class: past a ``[:name:]`` or a character; still inside?"""
    if pattern.startswith("[:", i):
        end = pattern.find(":]", i + 2)
        if end > 0:
            return end + 2, True
    return i + 1, pattern[i] != "]"


def compile_go_pattern(pattern: str) -> HeaderPattern:
    """Compile ``pattern`` as Go's ``regexp.Compile`` would accept it; raises :class:`PatternError`.

    Matching is RE2's, which is Go's for the header names patterns are matched against.
    """
    refused = _go_only_refusals(pattern)
    if refused is not None:
        raise PatternError(refused)
    options = re2.Options()
    options.log_errors = False  # the caller reports it (as a run warning)
    try:
        compiled: HeaderPattern = re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else str(exc)
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise PatternError(_go_error(text)) from None
    return compiled


@dataclass(frozen=True, slots=True)
class CompiledPatterns:
    """The usable patterns, plus ``(pattern, Go's error)`` for each one that was skipped."""

    patterns: tuple[HeaderPattern, ...]
    invalid: tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=64)
def compile_patterns(patterns: tuple[str, ...]) -> CompiledPatterns:
    """Compile propagation patterns as KServe's ``compilePatterns``: invalid ones are skipped.

    Cached, so the warning is logged once however many runs use the same configuration.
    """
    good: list[HeaderPattern] = []
    bad: list[tuple[str, str]] = []
    for text in patterns:
        try:
            good.append(compile_go_pattern(text))
        except PatternError as exc:
            bad.append((text, str(exc)))
            logger.warning("header propagation pattern %r skipped: %s", text, exc)
    return CompiledPatterns(tuple(good), tuple(bad))


def normalise_headers(
    headers: Mapping[str, str | list[str]] | Iterable[tuple[str, str]],
) -> tuple[tuple[str, str], ...]:
    """Flatten client headers into ``(canonical name, value)`` pairs, keeping every value in order."""
    items: Iterable[tuple[str, str | list[str]]]
    items = headers.items() if isinstance(headers, Mapping) else headers
    out: list[tuple[str, str]] = []
    for name, value in items:
        key = canonical_header_key(name)
        if isinstance(value, str):
            out.append((key, value))
        else:
            out.extend((key, item) for item in value)
    return tuple(out)


def propagated_headers(
    headers: tuple[tuple[str, str], ...], compiled: CompiledPatterns
) -> list[tuple[str, str]]:
    """The headers to send on a step call: matching client headers, then the JSON default.

    Every value of each matching header is copied; ``Content-Type: application/json`` is added when
    the first propagated Content-Type is absent or empty (Go's ``req.Header.Get`` is ``""``; an
    empty one stays, and the default follows it).
    """
    out: list[tuple[str, str]] = []
    if compiled.patterns:
        for name, value in headers:
            if name in _NEVER_FORWARDED:
                continue
            if any(pattern.search(name) for pattern in compiled.patterns):
                out.append((name, value))
    if not next((value for name, value in out if name == "Content-Type"), ""):
        out.append(("Content-Type", "application/json"))
    return out


# Characters that make a header entry a regular expression rather than a name (no client sends them).
_PATTERN_SIGNS: Final = frozenset("^$*+?()[]{}|\\")


def is_exact_header_name(entry: str) -> bool:
    """Whether ``entry`` can find a header where entries are exact names (KServe v0.11): a
    canonical header name (``X-Request-Id``), not a lower-case one nor a regular expression."""
    return (
        bool(entry) and entry == canonical_header_key(entry) and not any(c in _PATTERN_SIGNS for c in entry)
    )


def propagated_headers_exact(
    headers: tuple[tuple[str, str], ...], names: tuple[str, ...]
) -> list[tuple[str, str]]:
    """The headers KServe v0.11 sends on a step call: ``PROPAGATE_HEADERS`` entries are header
    names looked up as they are written (Go's ``headers[h]``, so only the canonical spelling finds
    anything), in the order of the entries (an entry given twice copies its values twice), and
    ``Content-Type: application/json`` is always added after them (a propagated Content-Type
    gets a second value).
    """
    out: list[tuple[str, str]] = []
    for entry in names:
        if entry in _NEVER_FORWARDED:
            continue
        out.extend((name, value) for name, value in headers if name == entry)
    out.append(("Content-Type", "application/json"))
    return out
