"""Real Git servers on loopback for the deploy tests: bare repositories served over ``file://``,
``git daemon`` (``git://``, receive-pack enabled) and ``git http-backend`` behind a small threaded
CGI server with basic-auth credentials (smart HTTP). ``git`` itself checks what was pushed.

    with GitServers(tmp_path) as servers:
        servers.create("deploys")            # a bare repository with one commit on main
        servers.file_url("deploys"), servers.git_url("deploys"), servers.http_url("deploys")
        servers.clone("deploys")             # a fresh `git clone` (a Path)
        servers.hand_edit("deploys", "graphs/default/g.yaml", "...", message="by hand")
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Hand Editor",
    "GIT_AUTHOR_EMAIL": "hand@example.org",
    "GIT_COMMITTER_NAME": "Hand Editor",
    "GIT_COMMITTER_EMAIL": "hand@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(*args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


class _CgiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _GitHttpServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _authorised(self) -> str | None:
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None
        try:
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return None
        if (user, password) == (self.server.username, self.server.password):
            return user
        return None

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle(self) -> None:
        self.server.requests.append((self.command, self.path))
        body = self._body() if self.command == "POST" else b""
        user = self._authorised()
        if user is None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = {
            **os.environ,
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": user,
            "REMOTE_ADDR": "127.0.0.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        done = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60, check=False
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = done.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _handle
    do_POST = _handle


class _GitHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, username: str, password: str) -> None:
        super().__init__(("127.0.0.1", 0), _CgiHandler)
        self.root = root
        self.username = username
        self.password = password
        self.requests: list[tuple[str, str]] = []


class GitServers:
    """Bare repositories under ``root``, served over file://, git:// and smart HTTP."""

    username = "deployer"
    password = "s3cret-token-value"

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "repos"
        self.root.mkdir(parents=True, exist_ok=True)
        self.work = tmp / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.daemon: subprocess.Popen[bytes] | None = None
        self.http: _GitHttpServer | None = None
        self.git_port = 0

    def __enter__(self) -> GitServers:
        self.git_port = free_port()
        self.daemon = subprocess.Popen(
            [
                "git",
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
                f"--base-path={self.root}",
                "--listen=127.0.0.1",
                f"--port={self.git_port}",
                str(self.root),
            ],
            env={**os.environ, **GIT_ENV},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _wait_port(self.git_port)
        self.http = _GitHttpServer(self.root, self.username, self.password)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.http is not None:
            self.http.shutdown()
            self.http.server_close()
        if self.daemon is not None:
            os.killpg(self.daemon.pid, 15)
            self.daemon.wait(timeout=10)

    # -- repositories ---------------------------------------------------------------------------

    def create(self, name: str, branch: str = "main") -> Path:
        bare = self.root / f"{name}.git"
        git("init", "-q", "--bare", "-b", branch, str(bare))
        seed = self.work / f"seed-{name}"
        git("init", "-q", "-b", branch, str(seed))
        (seed / "README.md").write_text("Graphs the cluster applies.\n")
        git("add", "README.md", cwd=seed)
        git("commit", "-q", "-m", "Start", cwd=seed)
        git("push", "-q", str(bare), branch, cwd=seed)
        shutil.rmtree(seed)
        return bare

    def reject_pushes(self, name: str, message: str = "branch main is protected") -> None:
        hook = self.root / f"{name}.git" / "hooks" / "pre-receive"
        hook.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit 1\n")
        hook.chmod(0o755)

    def file_url(self, name: str) -> str:
        return f"file://{self.root}/{name}.git"

    def git_url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.git_port}/{name}.git"

    def http_url(self, name: str) -> str:
        assert self.http is not None
        return f"http://127.0.0.1:{self.http.server_address[1]}/{name}.git"

    def clone(self, name: str, branch: str = "main") -> Path:
        target = self.work / f"clone-{name}-{time.monotonic_ns()}"
        git("clone", "-q", "-b", branch, str(self.root / f"{name}.git"), str(target))
        return target

    def read(self, name: str, path: str, branch: str = "main") -> str:
        return (self.clone(name, branch) / path).read_text()

    def log(self, name: str, branch: str = "main") -> list[str]:
        """Commit subjects of ``branch``, newest first."""
        return git("--git-dir", str(self.root / f"{name}.git"), "log", "--format=%s", branch).splitlines()

    def head(self, name: str, branch: str = "main") -> str:
        return git("--git-dir", str(self.root / f"{name}.git"), "rev-parse", branch).strip()

    def hand_edit(self, name: str, path: str, text: str, *, message: str = "Edit by hand") -> str:
        """Clone, change ``path``, commit as the hand editor and push; returns the new head."""
        clone = self.clone(name)
        target = clone / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        git("add", path, cwd=clone)
        git("commit", "-q", "-m", message, cwd=clone)
        git("push", "-q", "origin", "HEAD", cwd=clone)
        return git("rev-parse", "HEAD", cwd=clone).strip()
