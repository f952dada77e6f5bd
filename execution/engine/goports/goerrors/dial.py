"""What Go refuses before it sends a packet: ``url.Parse``, ``http.NewRequest``'s checks and the
dialer's address checks (Go 1.19 net)."""

from __future__ import annotations

import ipaddress
from typing import Final

from execution.engine.goports.goerrors.url import (
    _parse_url,
    _ParseError,
    _remove_empty_port,
    _text,
    _valid_optional_port,
    go_quote,
)

# --- net: what Dial refuses before touching the network -------------------------------------------

_DEFAULT_PORTS: Final = {b"http": b"80", b"https": b"443"}


def _split_host_port(host: bytes) -> tuple[bytes, bytes]:
    """url.URL ``Hostname()`` and ``Port()``."""
    colon = host.rfind(b":")
    name, port = host, b""
    if colon >= 0 and _valid_optional_port(host[colon:]):
        name, port = host[:colon], host[colon + 1 :]
    if name.startswith(b"[") and name.endswith(b"]"):
        name = name[1:-1]
    return name, port


def _is_domain_name(name: str) -> bool:
    """Go's ``isDomainName`` (net/dnsclient.go): what its resolver is willing to look up."""
    if name == ".":
        return True
    size = len(name)
    if size == 0 or size > 254 or (size == 254 and not name.endswith(".")):
        return False
    last = "."
    non_numeric = False
    part = 0
    for char in name:
        if char.isascii() and (char.isalpha() or char == "_"):
            non_numeric = True
            part += 1
        elif char.isascii() and char.isdigit():
            part += 1
        elif char == "-":
            if last == ".":
                return False
            part += 1
            non_numeric = True
        elif char == ".":
            if last in ".-" or part > 63 or part == 0:
                return False
            part = 0
        else:
            return False
        last = char
    return last != "-" and part <= 63 and non_numeric


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _split_address(address: str) -> str | None:
    """What net.SplitHostPort says is wrong with ``address`` (Go's AddrError text), or None."""
    last = address.rfind(":")
    if last < 0:
        return "missing port in address"
    inner_start, inner_end = 0, 0
    if address.startswith("["):
        end = address.find("]")
        if end < 0:
            return "missing ']' in address"
        if end + 1 == len(address):
            return "missing port in address"
        if end + 1 != last:
            return "too many colons in address" if address[end + 1] == ":" else "missing port in address"
        inner_start, inner_end = 1, end + 1
    elif ":" in address[:last]:
        return "too many colons in address"
    if "[" in address[inner_start:]:
        return "unexpected '[' in address"
    if "]" in address[inner_end:]:
        return "unexpected ']' in address"
    return None


def _dial_error(host: bytes, scheme: bytes) -> str | None:
    """``dial tcp: …`` for an address Go's net package refuses without a packet, else None."""
    name_raw, port_raw = _split_host_port(host)
    name, port = _text(name_raw), _text(port_raw or _DEFAULT_PORTS[scheme])
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")  # Go's transport dials the IDNA form
        except UnicodeError:
            return None  # Go's IDNA rules (UTS 46) differ in corners; leave these to the lookup
    address = f"[{name}]:{port}" if ":" in name else f"{name}:{port}"  # net.JoinHostPort
    problem = _split_address(address)
    if problem is not None:
        return f"dial tcp: address {address}: {problem}"
    if int(port) > 65535:
        return f"dial tcp: address {port}: invalid port"
    if not name or _is_ip(name) or _is_domain_name(name):
        return None
    return f"dial tcp: lookup {name}: no such host"


def go_parse_error(url: str) -> str | None:
    """Go's ``url.Parse(url)`` error text (``parse "URL": …``), or None when it parses. Pure."""
    try:
        _parse_url(url)
    except _ParseError as exc:
        return str(exc)
    return None


def go_url_error(url: str) -> str | None:
    """The cause Go gives for ``url`` before any packet is sent, or None if it would dial.

    In KServe's order: ``url.Parse`` (``parse "URL": …``), then the client's checks on the
    parsed URL (``Post "URL": unsupported protocol scheme "…"``, ``… http: no Host in request
    URL``), then the dialer's own checks of the address (``dial tcp: address …: invalid port``,
    ``dial tcp: lookup NAME: no such host`` for a name that is neither an IP address nor a
    valid domain name). Pure.
    """
    try:
        parsed = _parse_url(url)
    except _ParseError as exc:
        return str(exc)
    parsed.host = _remove_empty_port(parsed.host)
    post = f"Post {go_quote(_text(parsed.string(redact=True)))}: "
    if parsed.scheme not in _DEFAULT_PORTS:
        return post + f"unsupported protocol scheme {go_quote(_text(parsed.scheme))}"
    if not parsed.host:
        return post + "http: no Host in request URL"
    problem = _dial_error(parsed.host, parsed.scheme)
    return post + problem if problem is not None else None
