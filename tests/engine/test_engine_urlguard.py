"""The URL guard: which step URLs may be called, decided before any connection is made."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import httpx
import pytest
from graphkit import manifest, seq
from stepserver import Canary, Echo, StepServer

from execution.engine import BlockedUrl, EngineConfig, UrlGuard, make_client, run_graph, run_graph_sync

METADATA_SPELLINGS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",
    "http://0xa9fea9fe/",
    "http://0251.0376.0251.0376/",
    "http://0xA9.0xFE.0xA9.0xFE/",
    "http://169.254.43518/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::169.254.169.254]/",
    "http://[fd00:ec2::254]/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.google.internal./",
    "http://metadata/",
    "https://169.254.169.254:443/",
    "http://169.254.170.2/v2/credentials",
    "http://169.254.1.1/",
    "http://[fe80::1]/",
    "http://user:pw@169.254.169.254/",
]


@pytest.mark.parametrize("url", METADATA_SPELLINGS)
def test_metadata_and_link_local_are_blocked_even_when_everything_is_allowed(url: str) -> None:
    lenient = UrlGuard(
        allow_hosts=("metadata", "metadata.google.internal", "169.254.169.254"),
        allow_networks=("0.0.0.0/0", "::/0"),
        allow_loopback=True,
        allow_private=True,
    )
    with pytest.raises(BlockedUrl):
        lenient.check(url)


@pytest.mark.parametrize(
    "url", ["http://0.0.0.0/", "http://0/", "http://[::]/", "http://255.255.255.255/", "http://224.0.0.1/"]
)
def test_unspecified_broadcast_and_multicast_are_always_blocked(url: str) -> None:
    with pytest.raises(BlockedUrl):
        UrlGuard(allow_loopback=True, allow_private=True).check(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/",
        "http://127.1/",
        "http://2130706433/",
        "http://[::1]/",
        "http://localhost/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
def test_loopback_needs_permission(url: str) -> None:
    with pytest.raises(BlockedUrl, match="loopback"):
        UrlGuard().check(url)
    UrlGuard(allow_loopback=True).check(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/",
        "http://172.20.0.1/",
        "http://192.168.1.1/",
        "http://[fd12::1]/",
        "http://100.64.0.1/",
    ],
)
def test_private_needs_permission_or_allow_list(url: str) -> None:
    with pytest.raises(BlockedUrl, match="private"):
        UrlGuard().check(url)
    UrlGuard(allow_private=True).check(url)
    UrlGuard(
        allow_networks=("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "100.64.0.0/10")
    ).check(url)


def test_allow_hosts_permits_a_named_private_destination() -> None:
    guard = UrlGuard(allow_hosts=("localhost", "*.svc.local"))
    guard.check("http://localhost:9000/")
    with pytest.raises(BlockedUrl):
        UrlGuard(allow_hosts=("other",)).check("http://localhost:9000/")


@pytest.mark.parametrize("url", ["ftp://example.com/", "file:///etc/passwd", "gopher://x/", "http:///nohost"])
def test_only_http_and_https_with_a_host(url: str) -> None:
    with pytest.raises(BlockedUrl):
        UrlGuard(allow_loopback=True).check(url)


def test_public_addresses_are_allowed() -> None:
    UrlGuard().check("http://93.184.216.34/")
    UrlGuard().check("https://[2606:4700::1111]/")


def test_block_reason_names_the_address() -> None:
    with pytest.raises(BlockedUrl) as caught:
        UrlGuard().check("http://0xa9fea9fe/")
    assert caught.value.reason == "169.254.169.254 is a link-local/metadata address"


def _graph(url: str) -> object:
    return manifest({"root": seq({"serviceUrl": url})})


def test_engine_guard_blocks_before_connecting() -> None:
    """A canary listener proves that a blocked target is never connected to."""
    canary = Canary()
    try:
        url = f"http://127.0.0.1:{canary.port}/"
        result = run_graph_sync(_graph(url), b"{}", {}, config=EngineConfig(guard=UrlGuard()))  # type: ignore[arg-type]
        assert result.status == 500
        assert result.error == f'Post "{url}": blocked by URL guard: 127.0.0.1 is a loopback address'
        assert canary.accepted == 0
        allowed = EngineConfig(guard=UrlGuard(allow_loopback=True), step_timeout=0.5)
        run_graph_sync(_graph(url), b"{}", {}, config=allowed)  # type: ignore[arg-type]
        assert canary.accepted == 1  # positive control: the canary does see real connections
    finally:
        canary.close()


def test_client_transport_guard_blocks_even_without_engine_guard() -> None:
    canary = Canary()
    try:
        url = f"http://localhost:{canary.port}/"

        async def main() -> int:
            async with make_client(guard=UrlGuard()) as client:
                result = await run_graph(_graph(url), b"{}", {}, config=EngineConfig(), client=client)  # type: ignore[arg-type]
                assert result.error is not None and "blocked by URL guard" in result.error
                return result.status

        assert asyncio.run(main()) == 500
        assert canary.accepted == 0
    finally:
        canary.close()


def test_transport_pins_the_checked_address_and_keeps_the_host_header(server: StepServer) -> None:
    server.route("/", Echo(headers=True))
    url = f"http://localhost:{server.port}/"

    async def main() -> httpx.Response:
        async with make_client(guard=UrlGuard(allow_hosts=("localhost",))) as client:
            return await client.post(url, content=b"{}")

    response = asyncio.run(main())
    assert response.status_code == 200
    assert json.loads(response.content)["headers"]["Host"] == f"localhost:{server.port}"
    assert str(response.request.url) == url


class FlakyResolver:
    """``socket.getaddrinfo`` for one name: fails ``failures`` times, then answers ``address``.

    A rebinding DNS server does exactly this to a client that resolves a name more than once: the
    check sees nothing (or a public address), the connection sees the forbidden one.
    """

    def __init__(self, name: str, answers: list[str | None]) -> None:
        self.name = name
        self.answers = answers
        self.lookups = 0
        self._real = socket.getaddrinfo

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        text = host.decode() if isinstance(host, bytes) else str(host)
        if text != self.name:
            return self._real(host, port, *args, **kwargs)
        answer = self.answers[min(self.lookups, len(self.answers) - 1)]
        self.lookups += 1
        if answer is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (answer, int(port or 0)))]


@pytest.mark.parametrize(
    "answers",
    [
        [None, None, "127.0.0.1"],  # fails at both checks, answers the connection
        [None, "127.0.0.1"],
        # allowed at the check, forbidden afterwards (127.0.0.2 stands for a permitted address:
        # a public one would send a packet off this machine)
        ["127.0.0.2", "127.0.0.1"],
    ],
    ids=["fail-fail-loopback", "fail-loopback", "allowed-loopback"],
)
def test_dns_rebinding_never_reaches_a_forbidden_address(
    answers: list[str | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name is resolved once per connection; what is connected to is what was checked."""
    canary = Canary()
    resolver = FlakyResolver("rebind.test", answers)
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    try:
        url = f"http://rebind.test:{canary.port}/"
        result = run_graph_sync(
            _graph(url),  # type: ignore[arg-type]
            b"{}",
            {},
            config=EngineConfig(guard=UrlGuard(allow_networks=("127.0.0.2/32",)), step_timeout=2),
        )
        assert canary.accepted == 0
        assert result.status == 500
        if answers[0] is None:
            # Fail closed, worded as Go's resolver error.
            assert result.error == f'Post "{url}": dial tcp: lookup rebind.test: no such host'
            assert resolver.lookups == 1
    finally:
        canary.close()


@pytest.mark.parametrize(
    "url",
    [
        "http://[::ffff:0:5db8:d822]/",  # IPv4-translated 93.184.216.34
        "http://[64:ff9b::5db8:d822]/",  # NAT64 of a public address
        "http://[2002:5db8:d822::1]/",  # 6to4 of a public address
        "http://[2001:0:4136:e378:8000:63bf:a247:27dd]/",  # Teredo, client 93.184.216.34
        "http://[2606:4700::1111]/",  # plain global IPv6
    ],
)
def test_an_ipv6_address_carrying_a_public_ipv4_address_is_allowed(url: str) -> None:
    """The embedded IPv4 address is judged by the IPv4 rules: a public one passes."""
    UrlGuard().check(url)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[::ffff:0:7f00:1]/", "127.0.0.1 is a loopback address"),
        ("http://[::ffff:0:a9fe:a9fe]/", "169.254.169.254 is a link-local/metadata address"),
        ("http://[2002:a00:1::]/", "10.0.0.1 is a private address"),
        ("http://[64:ff9b::7f00:1]/", "127.0.0.1 is a loopback address"),
    ],
)
def test_an_ipv6_address_carrying_a_forbidden_ipv4_address_is_refused_naming_it(
    url: str, reason: str
) -> None:
    with pytest.raises(BlockedUrl, match=reason):
        UrlGuard().check(url)
