"""The response Content-Type the router would send (docs/router-semantics.md, "The answer").

``application/json`` exactly when the body is valid JSON (Go's strict ``json.Valid``); otherwise what
Go's ``http.ResponseWriter`` picks for an unlabelled body: ``http.DetectContentType`` of Go 1.19
(net/http/sniff.go, the WHATWG MIME-sniffing algorithm as Go implements it). An empty body gets no
Content-Type at all (Go only sniffs when there are bytes to sniff).

The signature table below is in Go's order (the first match wins), restated from Go's documented
behaviour and checked vector by vector against KServe's router (``tests/engine/data/sniff.json``).
Go 1.19 has no signatures for ``audio/basic`` (``.snd``), MP3 frames without ID3, or 7z: those
bodies fall through to the text-versus-binary rule, as they do in Go.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from execution.engine.goports.gojson import is_valid_json

__all__ = ["JSON_CONTENT_TYPE", "response_content_type", "sniff_content_type"]

JSON_CONTENT_TYPE: Final = "application/json"
_TEXT: Final = "text/plain; charset=utf-8"
_HTML: Final = "text/html; charset=utf-8"
_OCTET: Final = "application/octet-stream"
# Go's DetectContentType considers at most the first 512 bytes (sniff.go sniffLen).
_SNIFF_LEN: Final = 512
# WHATWG "whitespace bytes": TAB, LF, FF, CR, SPACE (not VT).
_WS: Final = b"\t\n\x0c\r "
# WHATWG "tag-terminating bytes": an HTML signature must be followed by one of these.
_TAG_END: Final = b" >"
# Bytes that make a body "binary" (WHATWG "binary data byte"): controls except TAB, LF, FF, CR, ESC.
_BINARY: Final = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])

# A matcher takes (first 512 bytes, index of the first non-whitespace byte) and returns a type or "".
_Matcher = Callable[[bytes, int], str]


def _html(tag: bytes) -> _Matcher:
    """An HTML tag after optional whitespace, letters case-insensitive, then a tag-terminating byte."""

    def match(data: bytes, first: int) -> str:
        rest = data[first:]
        if len(rest) < len(tag) + 1:
            return ""
        for want, got in zip(tag, rest, strict=False):
            if 0x41 <= want <= 0x5A:  # an upper-case letter in the pattern matches either case
                got &= 0xDF
            if want != got:
                return ""
        return _HTML if rest[len(tag)] in _TAG_END else ""

    return match


def _exact(prefix: bytes, kind: str) -> _Matcher:
    """The body starts with ``prefix`` (no whitespace skipped)."""

    def match(data: bytes, first: int) -> str:
        return kind if data.startswith(prefix) else ""

    return match


def _masked(pattern: bytes, mask: bytes, kind: str, *, skip_ws: bool = False) -> _Matcher:
    """``data[i] & mask[i] == pattern[i]`` for every i (optionally after leading whitespace)."""
    assert len(pattern) == len(mask)

    def match(data: bytes, first: int) -> str:
        if skip_ws:
            data = data[first:]
        if len(data) < len(pattern):
            return ""
        for want, bits, got in zip(pattern, mask, data, strict=False):
            if got & bits != want:
                return ""
        return kind

    return match


def _mp4(data: bytes, first: int) -> str:
    """WHATWG "matches the signature for MP4": an ``ftyp`` box naming an ``mp4`` brand."""
    if len(data) < 12:
        return ""
    box_size = int.from_bytes(data[:4], "big")
    if len(data) < box_size or box_size % 4 != 0 or data[4:8] != b"ftyp":
        return ""
    for start in range(8, box_size, 4):
        if start == 12:
            continue  # the major brand's version number, not a brand
        if data[start : start + 3] == b"mp4":
            return "video/mp4"
    return ""


def _text(data: bytes, first: int) -> str:
    """Text unless a binary data byte follows the leading whitespace."""
    for byte in data[first:]:
        if byte in _BINARY:
            return ""
    return _TEXT


_FF4: Final = b"\xff\xff\xff\xff"
_RIFF_MASK: Final = _FF4 + b"\x00\x00\x00\x00" + _FF4

_HTML_TAGS: Final = (
    b"<!DOCTYPE HTML", b"<HTML", b"<HEAD", b"<SCRIPT", b"<IFRAME", b"<H1", b"<DIV", b"<FONT",
    b"<TABLE", b"<A", b"<STYLE", b"<TITLE", b"<B", b"<BODY", b"<BR", b"<P", b"<!--",
)  # fmt: skip

_SIGNATURES: Final[tuple[_Matcher, ...]] = (
    *(_html(tag) for tag in _HTML_TAGS),
    _masked(b"<?xml", b"\xff" * 5, "text/xml; charset=utf-8", skip_ws=True),
    _exact(b"%PDF-", "application/pdf"),
    _exact(b"%!PS-Adobe-", "application/postscript"),
    # Byte order marks; the BOM alone is not enough, two (UTF-16) or one (UTF-8) more bytes must follow.
    _masked(b"\xfe\xff\x00\x00", b"\xff\xff\x00\x00", "text/plain; charset=utf-16be"),
    _masked(b"\xff\xfe\x00\x00", b"\xff\xff\x00\x00", "text/plain; charset=utf-16le"),
    _masked(b"\xef\xbb\xbf\x00", b"\xff\xff\xff\x00", _TEXT),
    # Images.
    _exact(b"\x00\x00\x01\x00", "image/x-icon"),
    _exact(b"\x00\x00\x02\x00", "image/x-icon"),
    _exact(b"BM", "image/bmp"),
    _exact(b"GIF87a", "image/gif"),
    _exact(b"GIF89a", "image/gif"),
    _masked(b"RIFF\x00\x00\x00\x00WEBPVP", _RIFF_MASK + b"\xff\xff", "image/webp"),
    _exact(b"\x89PNG\r\n\x1a\n", "image/png"),
    _exact(b"\xff\xd8\xff", "image/jpeg"),
    # Audio and video.
    _masked(b"FORM\x00\x00\x00\x00AIFF", _RIFF_MASK, "audio/aiff"),
    _masked(b"ID3", b"\xff\xff\xff", "audio/mpeg"),
    _masked(b"OggS\x00", b"\xff" * 5, "application/ogg"),
    _masked(b"MThd\x00\x00\x00\x06", b"\xff" * 8, "audio/midi"),
    _masked(b"RIFF\x00\x00\x00\x00AVI ", _RIFF_MASK, "video/avi"),
    _masked(b"RIFF\x00\x00\x00\x00WAVE", _RIFF_MASK, "audio/wave"),
    _mp4,
    _exact(b"\x1a\x45\xdf\xa3", "video/webm"),
    # Fonts: Embedded OpenType is 34 arbitrary bytes then "LP".
    _masked(b"\x00" * 34 + b"LP", b"\x00" * 34 + b"\xff\xff", "application/vnd.ms-fontobject"),
    _exact(b"\x00\x01\x00\x00", "font/ttf"),
    _exact(b"OTTO", "font/otf"),
    _exact(b"ttcf", "font/collection"),
    _exact(b"wOFF", "font/woff"),
    _exact(b"wOF2", "font/woff2"),
    # Archives (RAR by RAR Labs' signatures, as Go does).
    _exact(b"\x1f\x8b\x08", "application/x-gzip"),
    _exact(b"PK\x03\x04", "application/zip"),
    _exact(b"Rar!\x1a\x07\x00", "application/x-rar-compressed"),
    _exact(b"Rar!\x1a\x07\x01\x00", "application/x-rar-compressed"),
    _exact(b"\x00asm", "application/wasm"),
    _text,
)


def sniff_content_type(body: bytes) -> str | None:
    """Go's ``http.DetectContentType(body)``, or ``None`` for an empty body (Go sends no type then).

    Pure; looks at no more than the first 512 bytes.
    """
    if not body:
        return None
    data = body[:_SNIFF_LEN]
    first = len(data) - len(data.lstrip(_WS))
    for matcher in _SIGNATURES:
        kind = matcher(data, first)
        if kind:
            return kind
    return _OCTET


def response_content_type(body: bytes) -> str | None:
    """``application/json`` for a valid JSON body, else :func:`sniff_content_type`."""
    if body and is_valid_json(body):
        return JSON_CONTENT_TYPE
    return sniff_content_type(body)
