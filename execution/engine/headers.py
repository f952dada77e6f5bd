"""Header propagation as KServe's router does it (ROUTER-SEMANTICS §2.3, §2.12).

Incoming header names are canonicalised like Go's ``textproto.CanonicalMIMEHeaderKey``
(``x-request-id`` -> ``X-Request-Id``), then matched *unanchored* and *case-sensitively* against
each pattern. Patterns are Go RE2 in KServe; we compile them with Python's ``re`` (the common subset
behaves the same). Invalid patterns are skipped; the others still apply.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "CompiledPatterns",
    "canonical_header_key",
    "compile_patterns",
    "normalise_headers",
    "propagated_headers",
]

logger = logging.getLogger(__name__)

# RFC 7230 token characters: Go canonicalises only names made of these.
_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Go never forwards Host (the server strips it from req.Header), and its client ignores the framing
# headers in Header (reqWriteExcludeHeader). httpx would honour them and corrupt the request, so we
# drop them along with the hop-by-hop ones.
_NEVER_FORWARDED = frozenset(
    {
        "Host",
        "Content-Length",
        "Transfer-Encoding",
        "Trailer",
        "Connection",
        "Keep-Alive",
        "Upgrade",
        "Te",
        "Proxy-Connection",
    }
)


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


@dataclass(frozen=True, slots=True)
class CompiledPatterns:
    """The usable patterns, plus ``(pattern, error)`` for each one that was skipped."""

    patterns: tuple[re.Pattern[str], ...]
    invalid: tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=64)
def compile_patterns(patterns: tuple[str, ...]) -> CompiledPatterns:
    """Compile propagation patterns; invalid ones are skipped and logged once per process.

    Cached, so the warning appears once however many runs use the same configuration.
    """
    good: list[re.Pattern[str]] = []
    bad: list[tuple[str, str]] = []
    for text in patterns:
        try:
            good.append(re.compile(text))
        except re.error as exc:
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
    no Content-Type was propagated.
    """
    out: list[tuple[str, str]] = []
    if compiled.patterns:
        for name, value in headers:
            if name in _NEVER_FORWARDED:
                continue
            if any(pattern.search(name) for pattern in compiled.patterns):
                out.append((name, value))
    if not any(name == "Content-Type" for name, _ in out):
        out.append(("Content-Type", "application/json"))
    return out
