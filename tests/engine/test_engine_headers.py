"""Header propagation rules (docs/router-semantics.md, "Outbound calls"), checked against KServe's router.

The ``oracle_*`` vectors in ``tests/engine/data/`` are what ``../shared/oracle/kserve-router``
answered (``tests/engine/oracle_vectors.py`` records them); the engine must give the same answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from graphkit import manifest, seq
from oracle_vectors import (
    HEADER_CASES,
    NAMES,
    PATTERN_DEVIATIONS,
    PATTERNS,
    ask_headers,
    ask_patterns,
    headers_echo,
    normalise,
    received,
)
from oraclekit import require_oracle
from stepserver import Dynamic, StepServer

from execution.engine import EngineConfig, UrlGuard, run_graph_sync
from execution.engine.headers import (
    canonical_header_key,
    compile_go_pattern,
    compile_patterns,
    normalise_headers,
    propagated_headers,
    split_patterns,
)

DATA = Path(__file__).resolve().parent / "data"
PATTERN_VECTORS: dict[str, Any] = json.loads((DATA / "oracle_patterns.json").read_text())
HEADER_VECTORS: dict[str, Any] = json.loads((DATA / "oracle_headers.json").read_text())


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
    assert compiled.invalid == (
        ("Test-Header-[0-9", "error parsing regexp: missing closing ]: `[0-9`"),
        ("*Trace-Id*", "error parsing regexp: missing argument to repetition operator: `*`"),
    )


def test_an_empty_content_type_keeps_its_place_and_the_json_default_follows() -> None:
    """Go's ``req.Header.Get("Content-Type") == ""`` also holds for a propagated empty value."""
    assert _propagate({"Content-Type": ""}, ("Content-Type",)) == [
        ("Content-Type", ""),
        ("Content-Type", "application/json"),
    ]


@pytest.mark.parametrize(
    ("value", "patterns"),
    [("", ("",)), ("A", ("A",)), ("A,", ("A", "")), (",", ("", "")), ("A,,B", ("A", "", "B"))],
)
def test_the_pattern_list_is_split_as_gos_strings_split(value: str, patterns: tuple[str, ...]) -> None:
    assert split_patterns(value) == patterns


@pytest.mark.parametrize(
    "pattern",
    ["\\C", "[\\C]", "(?<name>Auth)", "(" * 1000 + "I" + ")" * 1000],
    ids=["backslash-C", "class-C", "angle-named-group", "nested-1000"],
)
def test_what_re2_accepts_but_go_refuses_is_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match=r"^error parsing regexp: "):
        compile_go_pattern(pattern)


def test_re2_escapes_inside_quoted_text_and_classes_stay_literal() -> None:
    assert compile_go_pattern("\\Q\\C(?<\\E").search("x\\C(?<y") is not None
    assert compile_go_pattern("[(?<]").search("(") is not None
    assert compile_go_pattern("(" * 999 + "I" + ")" * 999).search("Id") is not None


# --- against KServe's router (recorded answers) ---------------------------------------------------


@pytest.mark.parametrize("index", range(len(PATTERNS)), ids=[p[:24] or "empty" for p in PATTERNS])
def test_patterns_compile_and_match_as_in_kserves_router(index: int) -> None:
    """Validity, Go's error text and which header names match, pattern by pattern."""
    pattern = PATTERNS[index]
    expected = PATTERN_VECTORS["patterns"][pattern]
    compiled = compile_patterns(split_patterns(pattern))
    propagated = [name for name in NAMES if any(p.search(name) for p in compiled.patterns)]
    if pattern in PATTERN_DEVIATIONS:  # RE2's size budget (headers.py: deliberate deviation)
        assert expected["valid"] and compiled.invalid
        return
    assert (not compiled.invalid) == expected["valid"]
    assert propagated == expected["propagated"]
    if compiled.invalid:
        text, error = compiled.invalid[0]
        assert f"failed to compile pattern {json.dumps(text)}: {error}" == expected["error"]


def engine_received(propagate: str | None, headers: list[tuple[str, str]]) -> dict[str, Any]:
    """What a step server receives from the engine for one HEADER_CASES entry (ports normalised)."""
    with StepServer() as server:
        server.default = Dynamic(headers_echo)
        config = EngineConfig(
            propagate_headers=split_patterns(propagate) if propagate is not None else (),
            guard=UrlGuard(allow_loopback=True),
            step_timeout=10,
        )
        result = run_graph_sync(
            manifest({"root": seq({"serviceUrl": server.url("/")})}), b'{"a":1}', headers, config=config
        )
        return normalise({"status": result.status, "received": received(server)}, {"A": server.port})


@pytest.mark.parametrize("case", sorted(HEADER_CASES))
def test_a_step_receives_the_header_lines_kserves_router_sends(case: str) -> None:
    """Every line, in Go's order: Host, User-Agent, Content-Length, the rest sorted, Accept-Encoding."""
    propagate, headers = HEADER_CASES[case]
    assert engine_received(propagate, headers) == HEADER_VECTORS[case]


def test_the_recorded_vectors_are_what_the_oracle_answers_today() -> None:
    """Re-asks ``../shared/oracle/kserve-router`` every question and compares with the files."""
    require_oracle()
    assert ask_patterns() == PATTERN_VECTORS["patterns"]
    assert ask_headers() == HEADER_VECTORS


def test_host_and_framing_headers_are_never_forwarded() -> None:
    sent = _propagate(
        {"Host": "x", "Content-Length": "3", "Transfer-Encoding": "chunked", "X-Y": "1"}, (".",)
    )
    assert sent == [("X-Y", "1"), ("Content-Type", "application/json")]
