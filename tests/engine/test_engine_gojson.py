"""Go's encoding/json, as the Ensemble router decodes and re-encodes step bodies (§2.7, §2.10)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from execution.engine.goports.gojson import (
    GoJsonError,
    go_float,
    go_json_dumps,
    go_syntax_error,
    go_unmarshal_object,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12345678901234567890", "12345678901234567000"),
        ("1.0", "1"),
        ("1e21", "1e+21"),
        ("1e-7", "1e-7"),
        ("1.5e-10", "1.5e-10"),
        ("0.000001", "0.000001"),
        ("100", "100"),
        ("-0.0", "-0"),
        ("0.1", "0.1"),
        ("123456789.125", "123456789.125"),
        ("1e20", "100000000000000000000"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("5e-324", "5e-324"),
    ],
)
def test_numbers_are_float64_formatted_like_go(text: str, expected: str) -> None:
    assert go_float(float(text)) == expected


def test_encoding_sorts_keys_escapes_html_keeps_non_ascii() -> None:
    value = {"b": "<a & b>", "a": {"z": 1.0, "y": ["é", "日本", "\u2028"]}, "c": None, "d": True}
    assert (
        go_json_dumps(value)
        == (
            '{"a":{"y":["é","日本","\\u2028"],"z":1},"b":"\\u003ca \\u0026 b\\u003e","c":null,"d":true}'
        ).encode()
    )


def test_control_characters_use_go_escapes() -> None:
    """Go 1.19 has short escapes only for \\n \\r \\t; \\b and \\f are \\u0008 and \\u000c (oracle)."""
    assert go_json_dumps('\n\t\r\b\f\x01\x1f"\\') == b'"\\n\\t\\r\\u0008\\u000c\\u0001\\u001f\\"\\\\"'


def test_lone_surrogate_becomes_replacement_character() -> None:
    assert go_json_dumps(json.loads('"\\ud800"')) == '"\ufffd"'.encode()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[1,2]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        (b'"s"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
        (b"12", "json: cannot unmarshal number into Go value of type map[string]interface {}"),
        (b"true", "json: cannot unmarshal bool into Go value of type map[string]interface {}"),
        (b"", "unexpected end of JSON input"),
        (b"Not Found", "invalid character 'N' looking for beginning of value"),
        (b'{"a":1} x', "invalid character 'x' after top-level value"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
        (b"[1 2]", "invalid character '2' after array element"),
        (b"{1:2}", "invalid character '1' looking for beginning of object key string"),
        (b'{"a":NaN}', "invalid character 'N' looking for beginning of value"),
        (b'{"a":tru}', "invalid character '}' in literal true (expecting 'e')"),
        (b'{"a":-x}', "invalid character 'x' in numeric literal"),
        (b'{"a":1.}', "invalid character '}' after decimal point in numeric literal"),
        (b'{"a":"\\q"}', "invalid character 'q' in string escape code"),
        (b'{"a":"\n"}', "invalid character '\\n' in string literal"),
        (b'{"a":[1,]}', "invalid character ']' looking for beginning of value"),
        (b'{"a":1', "unexpected end of JSON input"),
        (b"<html>", "invalid character '<' looking for beginning of value"),
        (b'{"a":1e400}', "json: cannot unmarshal number 1e400 into Go value of type float64"),
    ],
)
def test_unmarshal_errors_read_like_go(body: bytes, message: str) -> None:
    with pytest.raises(GoJsonError) as caught:
        go_unmarshal_object(body)
    assert str(caught.value) == message


def test_null_is_accepted_as_a_nil_map() -> None:
    assert go_unmarshal_object(b"null") is None
    assert go_json_dumps(None) == b"null"


def test_objects_decode_with_float_numbers() -> None:
    assert go_unmarshal_object(b' {"a": [1, 2.5, {"b": 12345678901234567890}]} ') == {
        "a": [1.0, 2.5, {"b": 1.2345678901234567e19}]
    }


def test_scanner_accepts_valid_documents() -> None:
    for text in ['{"a":[1,-2.5e+3,true,false,null,"\\u00e9"]}', "[]", "{}", " 0 ", '"x"']:
        assert go_syntax_error(text) is None


def test_scanner_survives_hostile_nesting() -> None:
    """Deep nesting is scanned iteratively; Go's depth limit is reported, nothing overflows."""
    assert go_syntax_error("[" * 20000) == "invalid character '[' exceeded max depth"


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


def _as_float(value: object) -> object:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [_as_float(v) for v in value]
    assert isinstance(value, dict)
    return {k: _as_float(v) for k, v in value.items()}


@given(_json_values)
def test_go_encoding_round_trips_through_any_json_parser(value: object) -> None:
    """Whatever we encode is valid JSON meaning the same float64 tree (the property tests rely on)."""
    encoded = go_json_dumps(value)
    decoded = json.loads(encoded)
    expected = _as_float(value)

    def same(a: object, b: object) -> bool:
        if isinstance(a, float) and isinstance(b, (int, float)):
            return a == float(b)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, str) and isinstance(b, str):
            return a == b or "\ufffd" in b  # lone surrogates become U+FFFD, as in Go
        return a == b

    assert same(expected, decoded)
    assert go_syntax_error(encoded.decode()) is None
