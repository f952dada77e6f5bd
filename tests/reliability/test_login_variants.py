"""Attack item 8: Unicode spellings of one username share one login limit.

Django's login form normalises the username with NFKC and the name is compared case-insensitively
here (NFKC + casefold), so fullwidth ``alice``, ``ALICE`` and ``alice`` are one account to an attacker: they
must be one account to the rate limit too. Records ``login_guesses_per_name`` for make reliability.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) for c in text)  # U+FF01..U+FF5E mirror ASCII 0x21..0x7E


def _math(text: str, small_a: int) -> str:
    """``text`` (lower-case ASCII) in one of Unicode's mathematical alphabets, from its small a."""
    return "".join(chr(small_a + ord(c) - ord("a")) for c in text)


# Spellings that NFKC and casefold turn into "alice": fullwidth letters, mathematical bold,
# bold italic, bold Fraktur and monospace letters (U+1D41A, U+1D482, U+1D586, U+1D68A are their
# small a), a modifier letter (U+1D43), upper case, and the spaces the form strips.
VARIANTS = [
    "alice",
    "ALICE",
    "Alice",
    _fullwidth("alice"),
    _fullwidth("ALICE"),
    _math("alice", 0x1D41A),
    _math("alice", 0x1D482),
    _math("alice", 0x1D586),
    _math("alice", 0x1D68A),
    *("alice"[:i] + _fullwidth("alice"[i]) + "alice"[i + 1 :] for i in range(5)),
    " alice ",
    "\u1d43lice",
]


@pytest.fixture(autouse=True)
def fresh_failure_counts() -> Iterator[None]:
    """The failure counts live in the cache, which outlives a test: start and leave it empty."""
    cache.clear()
    yield
    cache.clear()


def guesses_allowed(client: Client, password: str = "wrong") -> int:
    """How many wrong passwords the form checked (200) before answering 429."""
    allowed = 0
    for name in VARIANTS * 3:
        status = client.post("/login/", {"username": name, "password": password}).status_code
        assert status in (200, 429), status
        allowed += status == 200
    return allowed


def test_every_variant_normalises_to_the_same_name() -> None:
    assert {unicodedata.normalize("NFKC", v).strip().casefold() for v in VARIANTS} == {"alice"}


@pytest.mark.django_db
def test_unicode_variants_of_a_name_share_one_login_limit(
    user: Any, settings: Any, record_figure: Callable[[str, Any], None]
) -> None:
    settings.LOGIN_MAX_FAILURES = 5
    client = Client()
    allowed = guesses_allowed(client)
    record_figure("login_guesses_per_name", allowed)
    record_figure("login_limit", settings.LOGIN_MAX_FAILURES)
    assert allowed == settings.LOGIN_MAX_FAILURES
    # and the right password, in yet another spelling, is refused too while the limit holds
    response = client.post("/login/", {"username": _fullwidth("ALICE"), "password": "alice-password-1"})
    assert response.status_code == 429


@pytest.mark.django_db
def test_the_limit_is_per_client_address(user: Any, settings: Any) -> None:
    """A guesser at one address does not lock the owner out from another."""
    settings.LOGIN_MAX_FAILURES = 3
    guesser = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(3):
        assert guesser.post("/login/", {"username": "alice", "password": "x"}).status_code == 200
    assert guesser.post("/login/", {"username": _fullwidth("a") + "lice", "password": "x"}).status_code == 429
    owner = Client(REMOTE_ADDR="198.51.100.2")
    assert owner.post("/login/", {"username": "alice", "password": "alice-password-1"}).status_code == 302
