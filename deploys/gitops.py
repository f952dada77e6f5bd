"""Reading one file at a branch head and committing one file to a branch, over real Git transports.

Pure Python on dulwich (no Django): ``file://``, ``git://``, ``http(s)://`` smart HTTP (basic auth)
and ``ssh://`` (with the machine's key). Nothing is checked out: the branch head is fetched shallow
(depth 1) into memory, the file's blob and the trees above it are written in memory, and exactly
those new objects and the commit are pushed. Every network wait is bounded by ``Remote.timeout``
and what a fetch may bring by ``Remote.max_bytes``.

Each failure is a :class:`GitError` with a ``kind`` a person can act on: ``auth`` (credentials
refused), ``not-found`` (no repository there), ``rejected`` (the server refused the push: a hook, a
protected branch), ``network`` (unreachable, refused, timed out), ``moved`` (the branch moved
between fetch and push), ``too-large``, ``protocol``.
"""

from __future__ import annotations

import socket
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import urllib3
from dulwich import client as git_client
from dulwich.errors import GitProtocolError, HangupException, NotGitRepository
from dulwich.object_store import commit_tree_changes, tree_lookup_path
from dulwich.objects import Blob, Commit, Tree
from dulwich.pack import pack_objects_to_data
from dulwich.repo import MemoryRepo

SCHEMES = ("file", "git", "http", "https", "ssh")
ZERO_SHA = b"0" * 40


class GitError(Exception):
    """A Git operation failed; ``kind`` says how (see the module's docstring)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class Remote:
    """A repository and how to reach it. ``password`` is never part of any message."""

    url: str
    username: str = ""
    password: str = ""
    timeout: float = 30.0
    max_bytes: int = 16 * 1024 * 1024

    def redacted_url(self) -> str:
        parts = urlsplit(self.url)
        if parts.password is None and parts.username is None:
            return self.url
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return parts._replace(netloc=host).geturl()


@dataclass(frozen=True)
class FileAtHead:
    """What a branch head holds at a path: the head commit (None: no such branch), the file's
    bytes (None: no such file), and the head commit's author and message."""

    head: str | None
    content: bytes | None
    author: str = ""
    message: str = ""


# -- bounded sockets for git:// ------------------------------------------------------------------
# dulwich's git:// client opens its socket without a timeout; its module's ``socket`` is wrapped so
# that every socket it opens has the timeout of the operation running in that thread.
_timeouts = threading.local()


def _timed_socket(*args: Any, **kwargs: Any) -> socket.socket:
    sock = socket.socket(*args, **kwargs)
    sock.settimeout(getattr(_timeouts, "seconds", 30.0))
    return sock


class _SocketModule(SimpleNamespace):
    def __getattr__(self, name: str) -> Any:
        return getattr(socket, name)


git_client.socket = _SocketModule(socket=_timed_socket)  # type: ignore[assignment]


class _NoRedirects(urllib3.PoolManager):
    """HTTP without following redirects: a redirect could lead past the URL guard (to a private
    or metadata address); the 3xx is answered as a failure instead."""

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> Any:  # type: ignore[override]
        return super().urlopen(method, url, redirect=False, **kw)


def scheme_of(url: str) -> str:
    return urlsplit(url).scheme.lower()


def _client(remote: Remote) -> tuple[git_client.GitClient, str]:
    scheme = scheme_of(remote.url)
    if scheme not in SCHEMES:
        raise GitError(
            "protocol", f"{scheme or 'no'} scheme: a repository URL is file://, git://, http(s):// or ssh://"
        )
    kwargs: dict[str, Any] = {}
    if scheme == "ssh":
        # The machine's ssh and key; never a prompt, and a bounded connection.
        kwargs["ssh_command"] = f"ssh -o BatchMode=yes -o ConnectTimeout={max(1, int(remote.timeout))}"
    if scheme in ("http", "https"):
        pool = git_client.default_urllib3_manager(None, pool_manager_cls=_NoRedirects, timeout=remote.timeout)
        kwargs["pool_manager"] = pool
        if remote.username or remote.password:
            kwargs["username"] = remote.username or "git"
            kwargs["password"] = remote.password
    try:
        return git_client.get_transport_and_path(remote.url, **kwargs)
    except ValueError as exc:
        raise GitError("protocol", f"{remote.redacted_url()} is not a repository URL: {exc}") from None


def _translate(remote: Remote, exc: BaseException) -> GitError:
    """The GitError for what dulwich or the network raised."""
    where = remote.redacted_url()
    if isinstance(exc, GitError):
        return exc
    if isinstance(exc, git_client.HTTPUnauthorized):
        return GitError("auth", f"{where} refused the credentials (HTTP 401): check the user name and token")
    text = str(exc)
    if isinstance(exc, NotGitRepository) or "not found" in text.lower() or "does not appear to be" in text:
        return GitError("not-found", f"There is no Git repository at {where}")
    if isinstance(exc, socket.timeout | TimeoutError):
        return GitError("network", f"{where} did not answer within {remote.timeout:g} s")
    if isinstance(exc, ConnectionRefusedError):
        return GitError("network", f"{where} refused the connection (nothing listens there)")
    lowered = text.lower()
    if "timed out" in lowered or "timeout" in lowered:
        return GitError("network", f"{where} did not answer within {remote.timeout:g} s")
    if (
        "max retries exceeded" in lowered
        or "failed to establish" in lowered
        or "connection refused" in lowered
    ):
        return GitError("network", f"{where} could not be reached (connection refused or no route)")
    if "not exported" in lowered or "no such repository" in lowered:
        return GitError("not-found", f"There is no Git repository at {where}")
    if "permission denied" in lowered or "host key verification failed" in lowered:
        return GitError("auth", f"{where} refused the SSH key: {text.strip()}")
    if "could not resolve" in lowered or "no route to host" in lowered:
        return GitError("network", f"{where} could not be reached: {text.strip()}")
    if isinstance(exc, HangupException):
        detail = f": {text.strip()}" if exc.stderr_lines else ""
        return GitError(
            "not-found", f"{where} hung up (no such repository, or it may not be pushed to){detail}"
        )
    if isinstance(exc, GitProtocolError):
        # The status as dulwich words it ("unexpected http resp 401 for URL"): a bare "401" could be
        # in the URL's port.
        if "resp 401" in text or "resp 403" in text or "authentication" in lowered:
            return GitError("auth", f"{where} refused the credentials: {text}")
        if "resp 404" in text:
            return GitError("not-found", f"There is no Git repository at {where}")
        if any(f"resp {code}" in text for code in (301, 302, 303, 307, 308)):
            return GitError(
                "protocol", f"{where} redirects elsewhere; redirects are not followed (use the final URL)"
            )
        return GitError("protocol", f"{where}: {text}")
    if isinstance(exc, OSError):
        reason = getattr(exc, "strerror", None) or text or type(exc).__name__
        return GitError("network", f"{where} could not be reached: {reason}")
    name = type(exc).__name__
    if "Timeout" in name:
        return GitError("network", f"{where} did not answer within {remote.timeout:g} s")
    if "MaxRetry" in name or "NewConnection" in name or "ProtocolError" in name:
        return GitError("network", f"{where} could not be reached: {text}")
    return GitError("protocol", f"{where}: {name}: {text}")


def _run(remote: Remote, operation: Callable[[], Any]) -> Any:
    _timeouts.seconds = remote.timeout
    try:
        return operation()
    except Exception as exc:
        raise _translate(remote, exc) from None


def _fetch_head(remote: Remote, branch: str) -> tuple[MemoryRepo, bytes | None]:
    """The branch's head commit fetched shallow into a new in-memory repository (None: no branch)."""
    client, path = _client(remote)
    repo = MemoryRepo()
    ref = b"refs/heads/" + branch.encode()
    found: dict[str, bytes] = {}
    received = [0]

    def wants(refs: Any, depth: int | None = None, **_: Any) -> Any:
        sha = refs.get(ref)
        if sha is None or sha == ZERO_SHA:
            return []
        found["head"] = sha
        return [sha]

    def progress(_: bytes) -> None:
        received[0] += len(_)

    result = _run(remote, lambda: client.fetch(path, repo, determine_wants=wants, depth=1, progress=progress))
    head = found.get("head") or result.refs.get(ref)
    if head is not None and head not in repo.object_store:  # type: ignore[operator]
        head = None
    size = sum(len(repo.object_store[sha].as_raw_string()) for sha in list(repo.object_store))
    if size > remote.max_bytes:
        raise GitError(
            "too-large", f"The head of {branch!r} at {remote.redacted_url()} is over {remote.max_bytes} bytes"
        )
    return repo, head


def _file_in(repo: MemoryRepo, head: bytes, path: str) -> bytes | None:
    commit = repo[head]
    assert isinstance(commit, Commit)
    try:
        mode, sha = tree_lookup_path(repo.object_store.__getitem__, commit.tree, path.encode())
    except KeyError:
        return None
    if not stat.S_ISREG(mode):
        return None
    blob = repo[sha]
    return blob.data if isinstance(blob, Blob) else None


def read_file(remote: Remote, branch: str, path: str) -> FileAtHead:
    """The file ``path`` at the head of ``branch``."""
    repo, head = _fetch_head(remote, branch)
    if head is None:
        return FileAtHead(head=None, content=None)
    commit = repo[head]
    assert isinstance(commit, Commit)
    return FileAtHead(
        head=head.decode(),
        content=_file_in(repo, head, path),
        author=commit.author.decode("utf-8", "replace"),
        message=commit.message.decode("utf-8", "replace").strip(),
    )


@dataclass(frozen=True)
class Pushed:
    commit: str
    base: str | None  # the head the commit was made on (None: a new branch)
    base_content: bytes | None  # the file as it was there


def push_file(
    remote: Remote,
    *,
    base_branch: str,
    branch: str,
    path: str,
    content: bytes,
    message: str,
    author: str,
    check_base: Callable[[str | None, bytes | None], None] | None = None,
) -> Pushed:
    """Commit ``content`` at ``path`` on top of ``base_branch``'s head and push it to ``branch``
    (the same branch: a commit; another: a review branch created or replaced).

    ``check_base(head, content_there)`` may refuse the base (raise) before anything is pushed: the
    caller's drift check. When the branch moved between fetch and push, raises GitError ``moved``.
    """
    repo, head = _fetch_head(remote, base_branch)
    base_content = _file_in(repo, head, path) if head is not None else None
    base_text = head.decode() if head is not None else None
    if check_base is not None:
        check_base(base_text, base_content)
    blob = Blob.from_string(content)
    repo.object_store.add_object(blob)
    before = set(repo.object_store)
    if head is not None:
        parent = repo[head]
        assert isinstance(parent, Commit)
        root: Any = parent.tree
    else:
        root = Tree()
        repo.object_store.add_object(root)
    tree_id = commit_tree_changes(repo.object_store, root, [(path.encode(), stat.S_IFREG | 0o644, blob.id)])
    commit = Commit()
    commit.tree = tree_id
    commit.parents = [head] if head is not None else []  # type: ignore[list-item]
    commit.author = commit.committer = author.encode()
    now = int(time.time())
    commit.author_time = commit.commit_time = now
    commit.author_timezone = commit.commit_timezone = 0
    commit.encoding = b"UTF-8"
    commit.message = message.encode()
    repo.object_store.add_object(commit)
    new_objects = [repo.object_store[sha] for sha in set(repo.object_store) - before] + [blob]
    pushed_ref = b"refs/heads/" + branch.encode()
    same_branch = branch == base_branch

    def update_refs(refs: dict[bytes, bytes]) -> dict[bytes, bytes]:
        if same_branch and refs.get(pushed_ref, ZERO_SHA) != (head or ZERO_SHA):
            raise GitError("moved", f"{branch!r} moved while the commit was being made")
        return {pushed_ref: commit.id}

    def generate_pack_data(have: Any, want: Any, *, ofs_delta: bool = False, progress: Any = None) -> Any:
        unique = {obj.id: obj for obj in new_objects}
        return pack_objects_to_data(list(unique.values()), ofs_delta=ofs_delta)

    client, remote_path = _client(remote)
    result = _run(
        remote,
        lambda: client.send_pack(remote_path.encode(), update_refs, generate_pack_data),  # type: ignore[arg-type]
    )
    status = (result.ref_status or {}).get(pushed_ref)
    if status is not None:
        lowered = status.lower()
        if "non-fast-forward" in lowered or "fetch first" in lowered or "stale" in lowered:
            raise GitError("moved", f"{branch!r} moved while the commit was being pushed ({status})")
        raise GitError("rejected", f"{remote.redacted_url()} refused the push to {branch!r}: {status}")
    return Pushed(commit=commit.id.decode(), base=base_text, base_content=base_content)
