"""Header propagation rules (ROUTER-SEMANTICS §2.3, §2.12)."""

from __future__ import annotations

import pytest

from execution.engine.headers import (
    canonical_header_key,
    compile_patterns,
    normalise_headers,
    propagated_headers,
)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("x-request-id", "X-Request-Id"),
        ("AUTHORIZATION", "Authorization"),
        ("content-type", "Content-Type"),
        ("test-header-key", "Test-Header-Key"),
        ("x_custom", "X_custom"),
        ("bad header", "bad header"),  # not a token: Go leaves it alone
        ("", ""),
    ],
)
def test_canonical_header_key_is_gos(raw: str, canonical: str) -> None:
    assert canonical_header_key(raw) == canonical


def _propagate(headers: dict[str, str | list[str]], patterns: tuple[str, ...]) -> list[tuple[str, str]]:
    return propagated_headers(normalise_headers(headers), compile_patterns(patterns))


def test_nothing_is_propagated_without_patterns_but_json_content_type_is_added() -> None:
    assert _propagate({"Authorization": "Bearer Token"}, ()) == [("Content-Type", "application/json")]


def test_patterns_are_unanchored_case_sensitive_regexes_on_canonical_names() -> None:
    headers: dict[str, str | list[str]] = {"authorization": "a", "x-autx": "b", "x-other": "c"}
    assert _propagate(headers, ("Aut",)) == [
        ("Authorization", "a"),
        ("X-Autx", "b"),
        ("Content-Type", "application/json"),
    ]
    assert _propagate(headers, ("authorization",)) == [("Content-Type", "application/json")]
    assert _propagate({"Authorization": "a", "Authorization-X": "b"}, ("^Authorization$",))[0] == (
        "Authorization",
        "a",
    )


def test_every_value_is_copied() -> None:
    assert _propagate({"X-Multi": ["1", "2"]}, ("X-Multi",)) == [
        ("X-Multi", "1"),
        ("X-Multi", "2"),
        ("Content-Type", "application/json"),
    ]


def test_propagated_content_type_replaces_the_default() -> None:
    assert _propagate({"content-type": "text/plain"}, ("Content-Type",)) == [("Content-Type", "text/plain")]


def test_invalid_pattern_is_skipped_and_reported_the_rest_apply() -> None:
    compiled = compile_patterns(("Test-Header-[0-9", "Auth*", "*Trace-Id*"))
    assert [p.pattern for p in compiled.patterns] == ["Auth*"]
    assert [bad for bad, _ in compiled.invalid] == ["Test-Header-[0-9", "*Trace-Id*"]


def test_host_and_framing_headers_are_never_forwarded() -> None:
    sent = _propagate(
        {"Host": "x", "Content-Length": "3", "Transfer-Encoding": "chunked", "X-Y": "1"}, (".",)
    )
    assert sent == [("X-Y", "1"), ("Content-Type", "application/json")]
