"""A name with several addresses: Go's dialer tries the next address only when a connection cannot
be made; a TLS handshake that fails on a connection that was made is the call's error."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from graphkit import manifest, seq
from oraclekit import RawServer

from execution.engine import EngineConfig, UrlGuard, run_graph_sync


def test_a_failed_handshake_does_not_try_the_next_address(monkeypatch: pytest.MonkeyPatch) -> None:
    with RawServer(b"<!DOCTYPE HTML>\n<html></html>", read_request=False) as raw:
        port = raw.port
        # 127.0.0.1 is the plain server; nothing listens on 127.0.0.2 (a refused connection).
        infos = [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))
            for address in ("127.0.0.1", "127.0.0.2")
        ]

        async def getaddrinfo(self: Any, host: str, *args: Any, **kwargs: Any) -> list[Any]:
            assert host == "twice.test"
            return infos

        monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)
        url = f"https://twice.test:{port}/x"
        config = EngineConfig(guard=UrlGuard(allow_loopback=True))
        result = run_graph_sync(manifest({"root": seq({"serviceUrl": url})}), b"{}", {}, config=config)
    assert result.status == 500
    assert result.error == f'Post "{url}": tls: first record does not look like a TLS handshake'
