"""Every name the engine takes from httpx's and httpcore's private modules, and nowhere else.

The engine's transports plug into httpcore and httpx below their public API: the anyio network
backend and stream (subclassed to keep a failed TLS handshake's first bytes, ``http.py``), the
raw anyio stream inside httpcore's stream, httpcore's check that an idle socket has something to
read (``wire.py``), and httpx's mapping of httpcore's exceptions to its own (``plainpool.py``).
None of these is promised across releases, so they are taken here only, and
``tests/engine/test_engine_privates.py`` checks each against the versions below: an upgrade of
httpx or httpcore fails that test by name until these are read again and the pins moved.
"""

from __future__ import annotations

import socket
from typing import Final, cast

import anyio.abc
from httpcore._backends.anyio import AnyIOBackend, AnyIOStream
from httpcore._utils import is_socket_readable as _is_socket_readable
from httpx._transports.default import map_httpcore_exceptions

__all__ = [
    "CHECKED_AGAINST",
    "AnyIOBackend",
    "AnyIOStream",
    "anyio_stream_of",
    "is_socket_readable",
    "map_httpcore_exceptions",
]

# The releases these names were read in (pyproject.toml pins the same).
CHECKED_AGAINST: Final = {"httpx": "0.28.1", "httpcore": "1.0.9"}


def anyio_stream_of(stream: AnyIOStream) -> anyio.abc.ByteStream:
    """The anyio byte stream httpcore's stream wraps (its ``_stream``)."""
    return cast(anyio.abc.ByteStream, stream._stream)


def is_socket_readable(sock: socket.socket | None) -> bool:
    """Whether an idle socket has data, an end or an error to read: what httpcore's own streams
    answer for ``get_extra_info("is_readable")`` (a pool must not reuse such a connection)."""
    return bool(_is_socket_readable(sock))
