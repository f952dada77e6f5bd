"""The private httpx and httpcore names the engine uses (execution/engine/transport/privates.py) still are
what it was written against, and nothing else reaches into those libraries' private modules.

A new httpx or httpcore release fails the first test by name: read each name in privates.py again
in the new release (the checks below say what the engine relies on), then move the pins there and
in pyproject.toml together.
"""

from __future__ import annotations

import inspect
import re
import socket
from importlib.metadata import version
from pathlib import Path

import httpcore
import httpx
import pytest

from execution.engine.transport import privates

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("package", sorted(privates.CHECKED_AGAINST))
def test_the_installed_release_is_the_one_the_private_names_were_read_in(package: str) -> None:
    checked = privates.CHECKED_AGAINST[package]
    assert version(package) == checked, (
        f"{package} {version(package)} is installed but execution/engine/transport/privates.py was checked "
        f"against {checked}: read its private names in the new release, then move both pins"
    )
    pinned = re.search(rf'"{package}==([^"]+)"', (ROOT / "pyproject.toml").read_text())
    assert pinned is not None and pinned.group(1) == checked, f"pyproject.toml must pin {package}=={checked}"


def test_httpx_maps_httpcore_errors_to_its_own_keeping_the_message() -> None:
    with pytest.raises(httpx.ReadTimeout, match="slow") as raised, privates.map_httpcore_exceptions():
        raise httpcore.ReadTimeout("slow")
    assert isinstance(raised.value.__cause__, httpcore.ReadTimeout)
    with pytest.raises(httpx.ConnectError), privates.map_httpcore_exceptions():
        raise httpcore.ConnectError("refused")
    with pytest.raises(KeyError), privates.map_httpcore_exceptions():  # anything else passes unchanged
        raise KeyError("x")


def test_an_idle_socket_is_readable_once_its_peer_wrote_or_closed() -> None:
    ours, theirs = socket.socketpair()
    try:
        assert privates.is_socket_readable(ours) is False
        theirs.sendall(b"x")
        assert privates.is_socket_readable(ours) is True
    finally:
        ours.close()
        theirs.close()
    assert privates.is_socket_readable(None) is True  # no socket: never reuse it


def test_the_anyio_stream_and_backend_have_what_the_tls_backend_overrides() -> None:
    inner = object()
    stream = privates.AnyIOStream(inner)  # type: ignore[arg-type]
    assert privates.anyio_stream_of(stream) is inner
    assert list(inspect.signature(privates.AnyIOStream.start_tls).parameters) == [
        "self", "ssl_context", "server_hostname", "timeout",
    ]  # fmt: skip
    assert list(inspect.signature(privates.AnyIOBackend.connect_tcp).parameters) == [
        "self", "host", "port", "timeout", "local_address", "socket_options",
    ]  # fmt: skip
    assert issubclass(privates.AnyIOStream, httpcore.AsyncNetworkStream)
    assert issubclass(privates.AnyIOBackend, httpcore.AsyncNetworkBackend)


def test_no_other_module_imports_private_httpx_or_httpcore_names() -> None:
    private = re.compile(r"\b(?:httpx|httpcore)\._\w+")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("execution", "graphs", "config", "bench")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "privates.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if private.search(line)
    ]
    assert offenders == [], "private httpx/httpcore names belong in execution/engine/transport/privates.py"
