"""The outbound call guard against a corpus of hostile step targets, through the real engine.

Every target runs as the one step of a graph through ``run_graph_sync`` with the guard an
environment would give a run (loopback ``127.0.0.2`` and the name ``steps.allowed.test`` allowed,
nothing else private). Proof that nothing was contacted comes from three witnesses:

- canaries: bare listeners on ``127.0.0.1`` and ``::1`` (same port) counting connection attempts;
  every loopback spelling in the corpus aims at that port;
- a connect recorder: ``socket.socket.connect`` is wrapped for the duration of each run, records
  every address a socket tries, and refuses anything outside loopback, so even a guard failure
  could never send a packet off this machine;
- a hermetic resolver: ``socket.getaddrinfo`` answers the corpus's names itself (some of them
  resolve to metadata, private or loopback addresses) and refuses every other name but
  ``localhost``.

Redirects are followed as Go's client follows them, and the guard checks every hop: a step on an
allowed host answering 302 towards a forbidden target fails with the guard's refusal (naming the
redirect), and the canary sees nothing.

DNS rebinding: a name whose lookups fail (or answer a public address) at check time and answer
a forbidden address afterwards. The engine resolves a name once per connection and connects only
to what it checked, failing closed when the lookup fails; ``make reliability`` reports the attempts
and the connections they got to forbidden addresses (goal 0).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from faultkit import stepserver

from execution.engine import EngineConfig, UrlGuard, run_graph_sync
from graphs.language import manifest_from_document

ALLOWED_IP = "127.0.0.2"
ALLOWED_NAME = "steps.allowed.test"
GUARD = UrlGuard(allow_hosts=(ALLOWED_NAME,), allow_networks=(f"{ALLOWED_IP}/32",))

# Names the hermetic resolver answers: what a hostile DNS (or a rebinding one) could say.
FAKE_DNS: dict[str, list[str]] = {
    ALLOWED_NAME: [ALLOWED_IP],
    "imds.rebind.test": ["169.254.169.254"],
    "private.rebind.test": ["10.0.0.1"],
    "loopback.rebind.test": ["127.0.0.1"],
    "v6loop.rebind.test": ["::1"],
    "mixed.rebind.test": ["93.184.216.34", "127.0.0.1"],  # one bad answer among good ones blocks
    "mapped.rebind.test": ["::ffff:169.254.169.254"],
    "ip6-localhost": ["::1"],  # Debian's /etc/hosts name for ::1 (absent on this machine)
    "ip6-loopback": ["::1"],
}
REAL_DNS = frozenset({"localhost"})  # answered from /etc/hosts


# The corpus: {port} is the canaries' port. Each target must be refused before any connection.
REFUSED = [
    # loopback, not allowed here (only 127.0.0.2 is)
    "http://127.0.0.1:{port}/",
    "http://127.1:{port}/",
    "http://2130706433:{port}/",
    "http://0x7f000001:{port}/",
    "http://0177.0.0.1:{port}/",
    "http://127.0.0.255:{port}/",
    "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://[0:0:0:0:0:ffff:7f00:1]:{port}/",
    "http://localhost:{port}/",
    "http://LOCALHOST.:{port}/",
    "http://ip6-localhost:{port}/",
    "http://ip6-loopback:{port}/",
    # unspecified (Linux delivers 0.0.0.0 to loopback), broadcast, multicast
    "http://0.0.0.0:{port}/",
    "http://0:{port}/",
    "http://[::]:{port}/",
    "http://255.255.255.255/",
    "http://224.0.0.1/",
    # RFC 1918, CGNAT, IPv6 unique local, and private behind an IPv4-mapped spelling
    "http://10.0.0.1/",
    "http://10.255.255.254:8080/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.0.1/",
    "http://192.168.255.254:8443/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::ffff:192.168.1.1]/",
    # cloud metadata in every spelling: dotted, decimal, hex, octal, mixed, short, IPv4-mapped, NAT64
    "http://169.254.169.254/latest/meta-data/",
    "https://169.254.169.254/",
    "http://2852039166/",
    "http://0xa9fea9fe/",
    "http://0xA9.0xFE.0xA9.0xFE/",
    "http://0251.0376.0251.0376/",
    "http://0251.254.43518/",
    "http://169.254.43518/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[fd00:ec2::254]/",
    # IPv4 embedded in IPv6 spellings: IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible
    # (::a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002:aabb:ccdd::/48), Teredo (2001::/32, the client
    # address inverted); each is judged by the IPv4 address it carries
    "http://[::ffff:0:7f00:1]:{port}/",
    "http://[::ffff:0:127.0.0.1]:{port}/",
    "http://[::ffff:0:a9fe:a9fe]/",
    "http://[::ffff:0:a00:1]/",
    "http://[::127.0.0.1]:{port}/",
    "http://[::7f00:1]:{port}/",
    "http://[::169.254.169.254]/",
    "http://[::10.0.0.1]/",
    "http://[64:ff9b::127.0.0.1]:{port}/",
    "http://[64:ff9b::7f00:1]:{port}/",
    "http://[64:ff9b::10.0.0.1]/",
    "http://[64:ff9b::192.168.1.1]/",
    "http://[2002:7f00:1::]:{port}/",
    "http://[2002:7f00:1::1]:{port}/",
    "http://[2002:a9fe:a9fe::]/",
    "http://[2002:a9fe:a9fe:1:2:3:4:5]/",
    "http://[2002:a00:1::1]/",
    "http://[2002:c0a8:101::1]/",
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:{port}/",
    "http://[2001:0:4136:e378:8000:63bf:5601:5601]/",
    "http://169.254.170.2/v2/credentials",
    "http://100.100.100.200/latest/meta-data/",
    "http://[fe80::1]/",
    "http://169.254.1.1/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.GOOGLE.INTERNAL./computeMetadata/v1/",
    "http://metadata/",
    "http://metadata.goog/",
    "http://instance-data/latest/meta-data/",
    # userinfo and fragment tricks: the real host is the forbidden one
    "http://steps.allowed.test@169.254.169.254/",
    "http://steps.allowed.test:80@127.0.0.1:{port}/",
    "http://127.0.0.1:{port}#@steps.allowed.test/",
    # names that resolve to forbidden addresses
    "http://imds.rebind.test/",
    "http://private.rebind.test/",
    "http://loopback.rebind.test:{port}/",
    "http://v6loop.rebind.test:{port}/",
    "http://mixed.rebind.test:{port}/",
    "http://mapped.rebind.test/",
    # other schemes
    "file:///etc/passwd",
    "gopher://127.0.0.1:{port}/_GET%20/",
    "ftp://127.0.0.1:{port}/",
    "dict://127.0.0.1:{port}/",
]

# A step on an allowed host that answers 302 towards a forbidden target.
REDIRECTS = {
    "/to-metadata": "http://169.254.169.254/latest/meta-data/",
    "/to-canary": "http://127.0.0.1:{port}/",
    "/to-canary-v6": "http://[::1]:{port}/",
    "/to-file": "file:///etc/passwd",
}

# Go's dialer refuses some spellings itself (127.1, 2130706433, 0177.0.0.1: neither an IP address
# nor a domain name to Go), with its own "no such host": refused before the guard, as in KServe.
REFUSAL_WORDS = ("blocked by URL guard", "unsupported protocol scheme", "no such host")


@dataclass
class Canaries:
    v4: Any
    v6: Any

    @property
    def port(self) -> int:
        return int(self.v4.port)

    @property
    def accepted(self) -> int:
        return int(self.v4.accepted) + self.v6.accepted


@pytest.fixture(scope="module")
def canaries() -> Iterator[Canaries]:
    v4 = stepserver.Canary("127.0.0.1")
    v6 = stepserver.Canary("::1", v4.port)
    try:
        yield Canaries(v4, v6)
    finally:
        v4.close()
        v6.close()


@pytest.fixture(scope="module")
def allowed_server(canaries: Canaries) -> Iterator[Any]:
    """A step server on the allowed loopback address, with redirects towards forbidden targets."""
    with stepserver.StepServer(host=ALLOWED_IP) as server:
        server.route("/ok", stepserver.Reply(json={"predictions": ["fine"]}))
        for path, location in REDIRECTS.items():
            server.route(
                path,
                stepserver.Reply(
                    status=302, body=b"", headers={"Location": location.format(port=canaries.port)}
                ),
            )
        yield server


class ConnectRecorder:
    """Every address a socket of this process tries to connect to; non-loopback ones are refused."""

    def __init__(self) -> None:
        self.addresses: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def check(self, address: Any) -> None:
        host, port = str(address[0]), int(address[1])
        with self._lock:
            self.addresses.append((host, port))
        if not ipaddress.ip_address(host.split("%", 1)[0]).is_loopback:
            raise ConnectionRefusedError(f"the test refuses to leave loopback ({host})")


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> ConnectRecorder:
    recorder = ConnectRecorder()
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            recorder.check(address)
        return real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            recorder.check(address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else str(host)
        name = name.rstrip(".").lower()
        if name in FAKE_DNS:
            out = []
            for text in FAKE_DNS[name]:
                family = socket.AF_INET6 if ":" in text else socket.AF_INET
                sockaddr = (
                    (text, int(port or 0), 0, 0) if family == socket.AF_INET6 else (text, int(port or 0))
                )
                out.append((family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr))
            return out
        try:
            ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            if name not in REAL_DNS:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return recorder


def run_step(url: str, guard: UrlGuard = GUARD) -> Any:
    """Run ``url`` as the one step of a Sequence through the real engine (parser included)."""
    graph = manifest_from_document(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "guard-probe"},
            "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": url}]}}},
        }
    )
    config = EngineConfig(guard=guard, step_timeout=2.0, deadline=5.0)
    return run_graph_sync(graph, b'{"instances":[1]}', {"Content-Type": "application/json"}, config=config)


def step_finished(result: Any) -> Any:
    return next(e for e in result.trace if e.type == "step.finished")


def test_the_corpus_holds_at_least_forty_targets() -> None:
    assert len(REFUSED) + len(REDIRECTS) >= 40
    assert len(set(REFUSED)) == len(REFUSED)


@pytest.mark.parametrize("target", REFUSED)
def test_a_forbidden_target_is_refused_before_any_connection(
    target: str, canaries: Canaries, recorder: ConnectRecorder, record_figure: Any
) -> None:
    url = target.format(port=canaries.port)
    seen_before = canaries.accepted
    result = run_step(url)
    finished = step_finished(result)
    refused = result.status == 500 and any(word in (result.error or "") for word in REFUSAL_WORDS)
    contacted = len(recorder.addresses) + canaries.accepted - seen_before
    record_figure("guard_case", {"url": url, "refused": refused, "connections": contacted})
    assert refused, (url, result.status, result.error)
    assert finished.data["outcome"] == "error" and finished.data["status"] is None
    assert any(word in finished.data["error"] for word in REFUSAL_WORDS), finished.data["error"]
    assert recorder.addresses == [], recorder.addresses
    assert canaries.accepted == seen_before


@pytest.mark.parametrize("path", sorted(REDIRECTS))
@pytest.mark.parametrize("host", [ALLOWED_IP, ALLOWED_NAME])
def test_a_redirect_to_a_forbidden_target_is_refused_at_that_hop(
    path: str,
    host: str,
    allowed_server: Any,
    canaries: Canaries,
    recorder: ConnectRecorder,
    record_figure: Any,
) -> None:
    url = f"http://{host}:{allowed_server.port}{path}"
    seen_before = canaries.accepted
    result = run_step(url)
    finished = step_finished(result)
    stray = [a for a in recorder.addresses if a != (ALLOWED_IP, allowed_server.port)]
    refused = result.status == 500 and any(word in (result.error or "") for word in REFUSAL_WORDS)
    record_figure(
        "guard_redirect",
        {"url": url, "refused": refused, "connections": len(stray) + canaries.accepted - seen_before},
    )
    assert refused, (result.status, result.error)
    assert finished.data["outcome"] == "error"
    assert [hop["status"] for hop in finished.data["redirects"]] == [302]
    if "blocked by URL guard" in (result.error or ""):
        assert result.error is not None and result.error.endswith(f'(redirect 1 from "{url}")')
    assert recorder.addresses == [(ALLOWED_IP, allowed_server.port)], recorder.addresses
    assert canaries.accepted == seen_before


# Lookups of one name in order; the last answer repeats. None: the lookup fails.
REBINDING = {
    "fail-fail-loopback": [None, None, "127.0.0.1"],
    "fail-loopback": [None, "127.0.0.1"],
    "fail-fail-metadata": [None, None, "169.254.169.254"],
    "public-loopback": ["93.184.216.34", "127.0.0.1"],
    "public-metadata": ["93.184.216.34", "169.254.169.254"],
    "allowed-loopback": [ALLOWED_IP, "127.0.0.1"],
}


@pytest.mark.parametrize("answers", list(REBINDING.values()), ids=list(REBINDING))
def test_dns_rebinding_gets_no_connection_to_a_forbidden_address(
    answers: list[str | None],
    canaries: Canaries,
    recorder: ConnectRecorder,
    monkeypatch: pytest.MonkeyPatch,
    record_figure: Any,
) -> None:
    """The name is looked up once per connection; the connection goes where the check looked."""
    lookups: list[str | None] = []
    checked = socket.getaddrinfo  # the corpus's hermetic resolver (installed by ``recorder``)

    def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if str(host).rstrip(".").lower() != "rebind.corpus.test":
            return checked(host, port, *args, **kwargs)
        answer = answers[min(len(lookups), len(answers) - 1)]
        lookups.append(answer)
        if answer is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (answer, int(port or 0)))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    url = f"http://rebind.corpus.test:{canaries.port}/"
    seen_before = canaries.accepted
    result = run_step(url)
    # The allowed or public address a check saw may be connected to (the recorder stops the public
    # one at the socket); anything else is what the rebinding was after.
    forbidden = [
        a for a in recorder.addresses if a[0] != ALLOWED_IP and not ipaddress.ip_address(a[0]).is_global
    ]
    contacted = len(forbidden) + canaries.accepted - seen_before
    record_figure("dns_rebinding", {"answers": answers, "connections": contacted})
    assert contacted == 0, (recorder.addresses, result.error)
    assert result.status == 500
    assert len(lookups) == 1, lookups
    if answers[0] is None:
        assert result.error == f'Post "{url}": dial tcp: lookup rebind.corpus.test: no such host'


@pytest.mark.parametrize("host", [ALLOWED_IP, ALLOWED_NAME])
def test_allow_listed_targets_work(host: str, allowed_server: Any, recorder: ConnectRecorder) -> None:
    result = run_step(f"http://{host}:{allowed_server.port}/ok")
    assert (result.status, result.error) == (200, None)
    assert result.body == b'{"predictions": ["fine"]}'
    # A name is connected to at the address the guard checked (no second lookup).
    assert recorder.addresses == [(ALLOWED_IP, allowed_server.port)]


def test_the_canaries_do_see_a_connection_the_guard_lets_through(
    canaries: Canaries, recorder: ConnectRecorder
) -> None:
    """Positive control: without the loopback ban the same targets reach the canaries."""
    seen_before = canaries.accepted
    lenient = UrlGuard(allow_loopback=True)
    run_step(f"http://127.0.0.1:{canaries.port}/", guard=lenient)
    run_step(f"http://[::1]:{canaries.port}/", guard=lenient)
    assert canaries.accepted == seen_before + 2
    assert canaries.v6.accepted >= 1
