"""Runs the test OpenID provider (serve.py) in a subprocess on a free loopback port."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parent

CLIENT_ID = "studio-test-client"
CLIENT_SECRET = "studio-test-secret"


@dataclass(frozen=True)
class Provider:
    url: str  # http://127.0.0.1:PORT
    issuer: str  # url + /openid
    client_id: str
    client_secret: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_provider(
    *, users: list[dict], redirect_uris: list[str], post_logout_redirect_uris: list[str] = ()
) -> Iterator[Provider]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="oidc-op-") as tmp:
        config = Path(tmp) / "config.json"
        config.write_text(
            json.dumps(
                {
                    "users": users,
                    "client_id": CLIENT_ID,
                    "client_secret": CLIENT_SECRET,
                    "redirect_uris": redirect_uris,
                    "post_logout_redirect_uris": list(post_logout_redirect_uris),
                }
            )
        )
        env = {**os.environ, "OP_DB": str(Path(tmp) / "op.sqlite3"), "OP_SITE_URL": url}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        log = open(Path(tmp) / "op.log", "w+")  # noqa: SIM115  (closed below)
        process = subprocess.Popen(
            [sys.executable, str(HERE / "serve.py"), str(port), str(config)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            discovery = f"{url}/openid/.well-known/openid-configuration"
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"the test OpenID provider exited:\n{log.read()}")
                try:
                    if requests.get(discovery, timeout=2).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                if time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"the test OpenID provider did not start:\n{log.read()}")
                time.sleep(0.2)
            yield Provider(url=url, issuer=f"{url}/openid", client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()
