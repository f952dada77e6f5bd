"""Personal API tokens: create (the key is returned once), list, revoke, and the lookup behind
``Authorization: Token <key>`` (config/auth.py).

A key is ``igs_`` followed by 43 URL-safe characters (32 random bytes); only its SHA-256 is stored.
The prefix tells these keys apart from DRF authtoken's 40 hexadecimal digits, which keep working.
"""

from __future__ import annotations

import datetime
import hashlib
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from graphs.errors import NoSuchToken, TokenRefused
from graphs.language import issue_dict
from graphs.models import ApiToken
from graphs.services import audit

if TYPE_CHECKING:
    from django.contrib.auth.models import User

KEY_PREFIX = "igs_"
# Characters of the key kept in clear (the "igs_" and 8 more): enough to tell a user's tokens apart
# in a list, far too few to guess the rest (43 characters, 256 bits).
SHOWN_PREFIX_CHARS = 12
# Tokens one user may hold at once: far more than anyone needs (one per script or machine), and a
# bound on what a stolen session can create.
MAX_TOKENS_PER_USER = 50
# A use is written to last_used_at at most this often per token, so that a busy script does not
# turn every read into a database write.
LAST_USED_RESOLUTION = datetime.timedelta(minutes=1)


class TokenRejected(Exception):
    """The key names no token, or an expired one; the message says which (the 401's detail)."""


@dataclass(frozen=True)
class CreatedToken:
    token: ApiToken
    key: str


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def is_personal_key(key: str) -> bool:
    """Whether ``key`` has the shape of a personal token's key (else it may be a DRF authtoken's)."""
    return key.startswith(KEY_PREFIX)


def api_token_list(*, user: User) -> QuerySet[ApiToken]:
    """The user's own tokens, newest first; nobody sees another user's tokens, staff included."""
    return ApiToken.objects.filter(user=user)


def api_token_create(*, user: User, name: str, expires_at: datetime.datetime | None) -> CreatedToken:
    """A new token for ``user``; the returned ``key`` is the only time the key exists in clear.

    Refused (400) with an expiry in the past or when the user already holds
    ``MAX_TOKENS_PER_USER`` tokens. Audited as ``token.create``.
    """
    if expires_at is not None and expires_at <= timezone.now():
        raise TokenRefused(
            "The expiry is in the past; choose a later time or none.",
            issues=[issue_dict("token.expiry-past", "The expiry must be in the future.", path="expires_at")],
        )
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        # The user's row is the lock that makes the count and the insert one step.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if ApiToken.objects.filter(user=user).count() >= MAX_TOKENS_PER_USER:
            raise TokenRefused(
                f"You already hold {MAX_TOKENS_PER_USER} API tokens, the most one user may have; "
                "revoke one you no longer use first."
            )
        token = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=key[:SHOWN_PREFIX_CHARS],
            key_hash=hash_key(key),
            expires_at=expires_at,
        )
        audit(
            user,
            "token.create",
            token_id=token.pk,
            name=name,
            prefix=token.prefix,
            expires_at=expires_at.isoformat() if expires_at else None,
        )
    return CreatedToken(token=token, key=key)


def api_token_revoke(*, user: User, token_id: int) -> None:
    """Delete the user's token ``token_id``: the next request with its key is 401. Another user's
    token, or one already revoked, is 404 (the same answer, so ids reveal nothing). Audited as
    ``token.revoke``."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(pk=token_id, user=user).first()
        if token is None:
            raise NoSuchToken(f"You have no API token with id {token_id}.")
        audit(user, "token.revoke", token_id=token.pk, name=token.name, prefix=token.prefix)
        token.delete()


def api_token_authenticate(key: str) -> User:
    """The active user whose personal token has ``key``; TokenRejected when there is none, it
    expired, or its user is inactive. Records the use (at most once per ``LAST_USED_RESOLUTION``)."""
    token = ApiToken.objects.select_related("user").filter(key_hash=hash_key(key)).first()
    if token is None:
        raise TokenRejected("Invalid token: it was revoked, or never existed.")
    now = timezone.now()
    if token.expires_at is not None and token.expires_at <= now:
        raise TokenRejected(
            f"The API token {token.name!r} expired at {token.expires_at.isoformat(timespec='seconds')}; "
            "create a new one on the API tokens page."
        )
    if not token.user.is_active:
        raise TokenRejected("User inactive or deleted.")
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user
