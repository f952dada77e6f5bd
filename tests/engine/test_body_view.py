"""How a body is kept for the trace and the stored run: text as text, anything a database text
column cannot hold (non-UTF-8 bytes, a NUL character) as base64, losslessly."""

from __future__ import annotations

import base64

import pytest

from execution.engine.trace import body_view


def test_utf8_text_is_kept_as_text() -> None:
    assert body_view('{"a": "é"}'.encode(), 1000) == {
        "body": '{"a": "é"}',
        "encoding": "utf-8",
        "size": 11,
        "truncated": False,
    }


@pytest.mark.parametrize("body", [b'{"a": "x\x00y"}', b"\x00", b"\xff\xfe"])
def test_a_body_with_a_nul_or_not_utf8_is_kept_as_base64_losslessly(body: bytes) -> None:
    view = body_view(body, 1000)
    assert view["encoding"] == "base64" and "\x00" not in view["body"]
    assert base64.b64decode(view["body"]) == body


def test_a_nul_past_the_cap_does_not_matter() -> None:
    view = body_view(b"abc\x00", 3)
    assert view == {"body": "abc", "encoding": "utf-8", "size": 4, "truncated": True}
