"""The Git core alone (no Django): a first commit on an empty repository, nested paths, a review
branch replaced, the fetch size cap, and how each failure is named, against bare repositories that
the real `git` made and reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitservers import git

from deploys import gitops


def bare(tmp_path: Path, name: str = "repo") -> str:
    path = tmp_path / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(path))
    return f"file://{path}"


def test_first_commit_on_an_empty_repository_and_nested_paths(tmp_path: Path) -> None:
    url = bare(tmp_path)
    remote = gitops.Remote(url)
    assert gitops.read_file(remote, "main", "a.yaml") == gitops.FileAtHead(head=None, content=None)

    first = gitops.push_file(
        remote, base_branch="main", branch="main", path="graphs/prod/a.yaml", content=b"a: 1\n",
        message="First\n", author="Studio <studio@example.org>",
    )  # fmt: skip
    second = gitops.push_file(
        remote, base_branch="main", branch="main", path="graphs/prod/b.yaml", content=b"b: 2\n",
        message="Second\n", author="Studio <studio@example.org>",
    )  # fmt: skip

    assert first.base is None and second.base == first.commit
    clone = tmp_path / "clone"
    git("clone", "-q", url.removeprefix("file://"), str(clone))
    assert (clone / "graphs/prod/a.yaml").read_text() == "a: 1\n"
    assert (clone / "graphs/prod/b.yaml").read_text() == "b: 2\n"
    assert git("log", "--format=%an <%ae>|%s", cwd=clone).splitlines() == [
        "Studio <studio@example.org>|Second",
        "Studio <studio@example.org>|First",
    ]
    git("fsck", "--strict", cwd=clone)
    found = gitops.read_file(remote, "main", "graphs/prod/a.yaml")
    assert found.content == b"a: 1\n" and found.head == second.commit and found.message == "Second"


def test_a_review_branch_is_made_from_the_base_and_replaced(tmp_path: Path) -> None:
    remote = gitops.Remote(bare(tmp_path))
    base = gitops.push_file(remote, base_branch="main", branch="main", path="x", content=b"1", message="m", author="S <s@x>")  # fmt: skip
    for content in (b"2", b"3"):
        review = gitops.push_file(
            remote, base_branch="main", branch="studio/g-v2", path="x", content=content, message="r", author="S <s@x>"
        )  # fmt: skip
        assert review.base == base.commit
    assert gitops.read_file(remote, "studio/g-v2", "x").content == b"3"
    assert gitops.read_file(remote, "main", "x").content == b"1"


def test_check_base_refuses_before_anything_is_pushed(tmp_path: Path) -> None:
    remote = gitops.Remote(bare(tmp_path))
    gitops.push_file(remote, base_branch="main", branch="main", path="x", content=b"1", message="m", author="S <s@x>")  # fmt: skip
    head = gitops.read_file(remote, "main", "x").head

    def refuse(found_head: str | None, content: bytes | None) -> None:
        assert (found_head, content) == (head, b"1")
        raise RuntimeError("drift")

    with pytest.raises(RuntimeError, match="drift"):
        gitops.push_file(
            remote, base_branch="main", branch="main", path="x", content=b"2", message="m", author="S <s@x>",
            check_base=refuse,
        )  # fmt: skip
    assert gitops.read_file(remote, "main", "x").head == head


def test_a_fetch_over_the_cap_is_refused(tmp_path: Path) -> None:
    url = bare(tmp_path)
    gitops.push_file(gitops.Remote(url), base_branch="main", branch="main", path="big", content=b"x" * 50_000, message="m", author="S <s@x>")  # fmt: skip

    with pytest.raises(gitops.GitError) as refused:
        gitops.read_file(gitops.Remote(url, max_bytes=10_000), "main", "big")
    assert refused.value.kind == "too-large"


def test_failures_are_named_and_never_show_the_password(tmp_path: Path) -> None:
    with pytest.raises(gitops.GitError) as missing:
        gitops.read_file(gitops.Remote(f"file://{tmp_path}/none.git"), "main", "x")
    assert missing.value.kind == "not-found"
    with pytest.raises(gitops.GitError) as scheme:
        gitops.read_file(gitops.Remote("ftp://example.org/x.git"), "main", "x")
    assert scheme.value.kind == "protocol"
    remote = gitops.Remote("https://bot:hunter2@git.example.org/x.git", password="hunter2")
    assert remote.redacted_url() == "https://git.example.org/x.git"
    assert "hunter2" not in repr(gitops._translate(remote, ConnectionRefusedError("refused")))
    assert gitops._translate(remote, TimeoutError()).kind == "network"


def test_an_unreachable_ssh_host_is_a_network_failure() -> None:
    from gitservers import free_port

    with pytest.raises(gitops.GitError) as refused:
        gitops.read_file(gitops.Remote(f"ssh://git@127.0.0.1:{free_port()}/x.git", timeout=5), "main", "x")
    assert refused.value.kind == "network"


def test_http_redirects_are_not_followed() -> None:
    """A redirect could lead past the URL guard (to a private or metadata address)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    followed: list[str] = []

    class Redirect(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/elsewhere"):
                followed.append(self.path)
            self.send_response(302)
            self.send_header("Location", "/elsewhere" + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(gitops.GitError) as refused:
            gitops.read_file(gitops.Remote(f"http://127.0.0.1:{server.server_address[1]}/x.git"), "main", "x")
    finally:
        server.shutdown()
        server.server_close()
    assert refused.value.kind == "protocol" and "redirects are not followed" in refused.value.message
    assert followed == []


def test_a_status_code_in_the_url_is_not_taken_for_the_answer() -> None:
    """dulwich words the status ("unexpected http resp 302 for URL"); a port such as 40123 holds
    "401" and must not turn a redirect into a refused credential."""
    from dulwich.errors import GitProtocolError

    remote = gitops.Remote("http://127.0.0.1:40123/x.git")
    redirect = GitProtocolError("unexpected http resp 302 for http://127.0.0.1:40123/x.git/info/refs")
    assert gitops._translate(remote, redirect).kind == "protocol"
    refused = GitProtocolError("unexpected http resp 403 for http://127.0.0.1:40404/x.git/info/refs")
    assert gitops._translate(remote, refused).kind == "auth"
