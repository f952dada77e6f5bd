"""The URL guard: which step URLs the engine may call (DESIGN rule 13).

Test runs POST to URLs taken from user-edited graphs, from a worker that may sit inside a cloud
network. The guard refuses, before any connection is made:

- always, even when allow-listed: cloud metadata endpoints in any spelling (``169.254.169.254`` as
  decimal ``2852039166``, hex ``0xa9fea9fe``, octal ``0251.0376.0251.0376``, IPv4-mapped
  ``::ffff:169.254.169.254``, ``fd00:ec2::254``, ``metadata.google.internal``, ``metadata``), all of
  link-local (169.254.0.0/16, fe80::/10), unspecified (0.0.0.0/8, ``::``), multicast and broadcast;
- an IPv6 address that carries an IPv4 one (mapped, translated, compatible, NAT64, 6to4, Teredo)
  is judged by the IPv4 rules too: ``[::ffff:0:7f00:1]`` is loopback, ``[2002:a9fe:a9fe::]``
  metadata;
- unless allowed by a flag or an allow list: loopback (127.0.0.0/8, ``::1``) and private networks
  (RFC 1918, 100.64.0.0/10 CGNAT, fc00::/7 ULA);
- schemes other than http and https.

The allow lists are exceptions for loopback/private destinations, not an exclusive list: public
addresses are always allowed. A host name is checked through *every* address it resolves to (any
forbidden address blocks it), and :meth:`UrlGuard.resolve` returns the checked addresses so that
the caller can connect to one of them rather than resolve again (closing the DNS-rebinding gap).
A name that does not resolve raises :class:`HostNotFound`: the caller fails closed instead of
letting a later lookup decide where the connection goes.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

__all__ = ["BlockedUrl", "GuardDecision", "HostNotFound", "UrlGuard"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_METADATA_NAMES: Final = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.com",
    }
)
_METADATA_ADDRESSES: Final = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean…
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "100.100.100.200",  # Alibaba Cloud
    )
)
_LINK_LOCAL: Final = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
_UNSPECIFIED: Final = (ipaddress.ip_network("0.0.0.0/8"), ipaddress.ip_network("::/128"))
_BROADCAST: Final = ipaddress.ip_address("255.255.255.255")
_PRIVATE: Final = (
    ipaddress.ip_network("10.0.0.0/8"),
    ipaddress.ip_network("172.16.0.0/12"),
    ipaddress.ip_network("192.168.0.0/16"),
    ipaddress.ip_network("100.64.0.0/10"),
    ipaddress.ip_network("fc00::/7"),
)
_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")


class BlockedUrl(Exception):
    """The guard refused a URL; ``reason`` says why (for the step's error cause)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class HostNotFound(Exception):
    """A host name did not resolve when the guard checked it. Callers must fail closed: connecting
    anyway would let the HTTP library resolve the name again, and a rebinding DNS server answers
    that second lookup with a forbidden address."""

    def __init__(self, host: str) -> None:
        super().__init__(f"lookup {host}: no such host")
        self.host = host


@dataclass(frozen=True, slots=True)
class GuardDecision:
    """A permitted URL: its host, port and the checked addresses it may be reached at."""

    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]
    is_ip_literal: bool


def _embedded_ipv4(address: IPAddress) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address carries, each to be judged by the IPv4 rules.

    A packet to such an address reaches (or is translated towards) the IPv4 address inside it, so
    ``[::ffff:0:7f00:1]`` is as much loopback as ``127.0.0.1``. The forms: IPv4-mapped
    (``::ffff:a.b.c.d``), IPv4-translated (``::ffff:0:a.b.c.d``, RFC 2765), IPv4-compatible
    (``::a.b.c.d``, deprecated), NAT64's well-known prefix (``64:ff9b::/96``, RFC 6052), 6to4
    (``2002:AABB:CCDD::/48``, RFC 3056) and Teredo (``2001::/32``: its server and its client,
    whose address is stored inverted, RFC 4380).
    """
    if isinstance(address, ipaddress.IPv4Address):
        return ()
    packed = int(address)
    low32 = ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if packed >> 32 == 0xFFFF0000:  # ::ffff:0:a.b.c.d, IPv4-translated
        return (low32,)
    if address in _NAT64:
        return (low32,)
    if packed >> 32 == 0 and packed > 1:  # ::a.b.c.d, IPv4-compatible (:: and ::1 are their own)
        return (low32,)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    return ()


def parse_ip_literal(host: str) -> IPAddress | None:
    """An IP address written in ``host``, including the legacy IPv4 forms ``inet_aton`` accepts.

    ``2852039166``, ``0xa9fea9fe``, ``0251.0376.0251.0376`` and ``169.254.43518`` all mean
    169.254.169.254 to the C resolver, so they must be recognised as such here.
    """
    text = host.strip("[]")
    if "%" in text:  # IPv6 zone id
        text = text.split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if text and all(ch in "0123456789abcdefxABCDEFX." for ch in text):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


@dataclass(frozen=True, slots=True)
class UrlGuard:
    """Policy for outbound step URLs. Immutable and safe to share between tasks and threads.

    ``allow_hosts`` are host names (exact, case-insensitive, or ``*.suffix``) and
    ``allow_networks`` CIDRs whose loopback/private destinations are permitted; ``allow_loopback``
    and ``allow_private`` permit those classes everywhere. Nothing permits metadata, link-local,
    unspecified, multicast or broadcast addresses.
    """

    allow_hosts: tuple[str, ...] = ()
    allow_networks: tuple[str, ...] = ()
    allow_loopback: bool = False
    allow_private: bool = False
    _networks: tuple[IPNetwork, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        networks = tuple(ipaddress.ip_network(cidr, strict=False) for cidr in self.allow_networks)
        object.__setattr__(self, "_networks", networks)

    # -- public API ---------------------------------------------------------------------------

    def check(self, url: str) -> None:
        """Raise :class:`BlockedUrl` unless ``url`` may be called. Resolves names (blocking);
        a name that does not resolve raises :class:`HostNotFound`."""
        self.resolve_sync(url)

    def resolve_sync(self, url: str) -> GuardDecision:
        """Check ``url`` with a blocking ``getaddrinfo``; returns the permitted addresses.

        Raises :class:`BlockedUrl` or :class:`HostNotFound`.
        """
        scheme, host, port, literal = self._precheck(url)
        if literal is not None:
            return self._decide(scheme, host, port, [literal], True)
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            raise HostNotFound(host) from None
        return self._decide(scheme, host, port, _addresses(infos), False)

    async def resolve(self, url: str) -> GuardDecision:
        """Check ``url`` resolving names on the event loop's resolver; returns permitted addresses.

        Resolves the name exactly once. Raises :class:`BlockedUrl` when any address is forbidden
        and :class:`HostNotFound` when the name does not resolve (fail closed).
        Decisions for IP-literal URLs are cached (no DNS is involved, so they cannot change).
        """
        cached = _literal_decision(self, url)
        if cached is not None:
            return cached
        scheme, host, port, literal = self._precheck(url)
        if literal is not None:
            return self._decide(scheme, host, port, [literal], True)
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            raise HostNotFound(host) from None
        return self._decide(scheme, host, port, _addresses(infos), False)

    # -- internals ----------------------------------------------------------------------------

    def _precheck(self, url: str) -> tuple[str, str, int, IPAddress | None]:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise BlockedUrl(f"{url!r} is not a valid URL: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise BlockedUrl(f"scheme {scheme!r} is not allowed (only http and https)")
        host = (parts.hostname or "").rstrip(".").lower()
        if not host:
            raise BlockedUrl(f"{url!r} has no host")
        if host in _METADATA_NAMES:
            raise BlockedUrl(f"{host} is a cloud metadata host")
        if port is None:
            port = 443 if scheme == "https" else 80
        return scheme, host, port, parse_ip_literal(host)

    def _host_allowed(self, host: str) -> bool:
        for entry in self.allow_hosts:
            pattern = entry.lower().rstrip(".")
            if pattern.startswith("*."):
                if host.endswith(pattern[1:]):
                    return True
            elif host == pattern:
                return True
        return False

    def _decide(
        self, scheme: str, host: str, port: int, addresses: Sequence[IPAddress], literal: bool
    ) -> GuardDecision:
        host_allowed = self._host_allowed(host)
        for address in addresses:
            self._check_address(address, host_allowed)
        return GuardDecision(scheme, host, port, tuple(str(a) for a in addresses), literal)

    def _check_address(self, address: IPAddress, host_allowed: bool) -> None:
        candidates: list[IPAddress] = [address, *_embedded_ipv4(address)]
        for candidate in candidates:
            if candidate in _METADATA_ADDRESSES or any(candidate in net for net in _LINK_LOCAL):
                raise BlockedUrl(f"{candidate} is a link-local/metadata address")
            if any(candidate in net for net in _UNSPECIFIED) or candidate == _BROADCAST:
                raise BlockedUrl(f"{candidate} is an unspecified/broadcast address")
            if candidate.is_multicast:
                raise BlockedUrl(f"{candidate} is a multicast address")
        allowed = host_allowed or any(address in net for net in self._networks)
        for candidate in candidates:
            if candidate.is_loopback and not (self.allow_loopback or allowed):
                raise BlockedUrl(f"{candidate} is a loopback address")
            if any(candidate in net for net in _PRIVATE) and not (self.allow_private or allowed):
                raise BlockedUrl(f"{candidate} is a private address")


@functools.lru_cache(maxsize=1024)
def _literal_decision(guard: UrlGuard, url: str) -> GuardDecision | None:
    """The decision for a URL whose host is an IP literal; None when the host is a name.

    Cached per (policy, URL): every step call checks its URL, often twice (engine and transport),
    and the ipaddress checks cost about 0.1 ms each time. Refusals raise and are not cached.
    """
    scheme, host, port, literal = guard._precheck(url)
    if literal is None:
        return None
    return guard._decide(scheme, host, port, [literal], True)


def _addresses(infos: Iterable[tuple[object, object, object, object, tuple[object, ...]]]) -> list[IPAddress]:
    out: list[IPAddress] = []
    for info in infos:
        sockaddr = info[4]
        text = str(sockaddr[0]).split("%", 1)[0]
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        if address not in out:
            out.append(address)
    return out
