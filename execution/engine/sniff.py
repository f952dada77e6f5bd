"""The response Content-Type the router would send (ROUTER-SEMANTICS §2.10).

``application/json`` exactly when the body is valid JSON (Go's strict ``json.Valid``); otherwise a
small subset of Go's ``http.DetectContentType``: a few well-known signatures, then text versus
binary by Go's rule. An empty body gets no Content-Type at all.
"""

from __future__ import annotations

from typing import Final

from execution.engine.gojson import is_valid_json

__all__ = ["JSON_CONTENT_TYPE", "response_content_type", "sniff_content_type"]

JSON_CONTENT_TYPE: Final = "application/json"
_TEXT: Final = "text/plain; charset=utf-8"
_HTML: Final = "text/html; charset=utf-8"
# Go's DetectContentType looks at most at the first 512 bytes.
_SNIFF_LEN: Final = 512
_HTML_TAGS: Final = (
    b"<!DOCTYPE HTML", b"<HTML", b"<HEAD", b"<SCRIPT", b"<IFRAME", b"<H1", b"<DIV", b"<FONT",
    b"<TABLE", b"<A", b"<STYLE", b"<TITLE", b"<B", b"<BODY", b"<BR", b"<P", b"<!--",
)  # fmt: skip
_MAGIC: Final = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b\x08", "application/x-gzip"),
    (b"\xef\xbb\xbf", _TEXT),
    (b"\xfe\xff", "text/plain; charset=utf-16be"),
    (b"\xff\xfe", "text/plain; charset=utf-16le"),
)
# Go's "binary data" bytes: control characters other than \t \n \f \r and ESC.
_BINARY: Final = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])


def sniff_content_type(body: bytes) -> str | None:
    """Go-style content sniffing for a non-JSON body; ``None`` for an empty body."""
    if not body:
        return None
    head = body[:_SNIFF_LEN]
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    stripped = head.lstrip(b"\t\n\x0c\r ")
    upper = stripped[:16].upper()
    for tag in _HTML_TAGS:
        if upper.startswith(tag) and len(stripped) > len(tag) and stripped[len(tag)] in b" >":
            return _HTML
    if stripped.startswith(b"<?xml"):
        return "text/xml; charset=utf-8"
    if any(byte in _BINARY for byte in head):
        return "application/octet-stream"
    return _TEXT


def response_content_type(body: bytes) -> str | None:
    """``application/json`` for a valid JSON body, else :func:`sniff_content_type`."""
    if body and is_valid_json(body):
        return JSON_CONTENT_TYPE
    return sniff_content_type(body)
