"""The TLS pools' network backend (``http.TlsBackend``): handshakes that succeed still work, and a
failed one keeps the server's first bytes for Go's error text (``transport/causes.py``)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpcore
import pytest

from execution.engine.transport.http import TLS_FIRST_BYTES, TlsBackend

_ANSWER = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{"ok":1}'


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (made with the openssl command)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def tls_server(certificate: tuple[Path, Path]) -> Iterator[int]:
    """A loopback TLS server answering every request on a connection with ``_ANSWER``."""
    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    conn.settimeout(2)
                    data = b""
                    while True:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                        while b"\r\n\r\n" in data:
                            _, _, data = data.partition(b"\r\n\r\n")
                            conn.sendall(_ANSWER)
            except (OSError, ssl.SSLError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join(timeout=2)
        listener.close()


def test_a_tls_step_answers_through_the_backend_and_keeps_its_connection(
    certificate: tuple[Path, Path], tls_server: int
) -> None:
    context = ssl.create_default_context(cafile=str(certificate[0]))

    async def main() -> list[tuple[int, bytes]]:
        async with httpcore.AsyncConnectionPool(ssl_context=context, network_backend=TlsBackend()) as pool:
            answers = []
            for _ in range(2):
                response = await pool.request("POST", f"https://127.0.0.1:{tls_server}/", content=b"{}")
                answers.append((response.status, response.content))
            assert len(pool.connections) == 1  # the second request reused the connection
            return answers

    assert asyncio.run(main()) == [(200, b'{"ok":1}'), (200, b'{"ok":1}')]


def test_a_failed_handshake_keeps_the_first_five_bytes() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = int(listener.getsockname()[1])

    def answer_plain_http() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer_plain_http, daemon=True)
    thread.start()

    async def main() -> BaseException:
        async with httpcore.AsyncConnectionPool(network_backend=TlsBackend()) as pool:
            with pytest.raises(httpcore.ConnectError) as caught:
                await pool.request("POST", f"https://127.0.0.1:{port}/", content=b"{}")
            return caught.value

    try:
        error = asyncio.run(main())
    finally:
        thread.join(timeout=2)
        listener.close()
    assert getattr(error, TLS_FIRST_BYTES) == b"HTTP/"
