"""Secrets kept in the database encrypted at rest (deploy targets' Git credentials).

Fernet (AES-128-CBC with HMAC-SHA256, from ``cryptography``) under the keys of
``STUDIO_ENCRYPTION_KEYS``: the first encrypts, every one decrypts, so a new key is put first and
the old ones stay listed until ``manage.py rotate_secrets`` has re-encrypted everything with the
new one. Unset, the one key is derived from ``SECRET_KEY`` with HKDF: changing SECRET_KEY then
makes the stored values unreadable unless the old derived key (``rotate_secrets --derived-key``,
run before the change) is listed.

A stored value is ``fernet:`` and the token, so a value without the prefix is recognisable as
plaintext: a row written before the migration that encrypted them, or by an older process during
a rolling upgrade. It is read as it is, and encrypted by the next change or ``rotate_secrets``.
"""

from __future__ import annotations

import base64
import binascii
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

PREFIX = "fernet:"
# Fixed HKDF parameters: changing either changes the derived key, and so every stored value.
_SALT = b"inference-graph-studio secretbox"
_INFO = b"fernet key v1"


class Unreadable(Exception):
    """A stored value no configured key decrypts (the key changed, or the value is damaged)."""


def derived_key(secret_key: str) -> str:
    """The Fernet key derived from ``secret_key`` (what encrypts while STUDIO_ENCRYPTION_KEYS is
    unset), as STUDIO_ENCRYPTION_KEYS would list it."""
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO).derive(secret_key.encode())
    return base64.urlsafe_b64encode(raw).decode()


def _check_key(key: str, position: int) -> bytes:
    try:
        valid = len(base64.urlsafe_b64decode(key.encode())) == 32
    except (binascii.Error, ValueError):
        valid = False
    if not valid:
        # The key itself is never part of the message: it may be a real one, mistyped.
        raise ImproperlyConfigured(
            f"entry {position} of STUDIO_ENCRYPTION_KEYS is not a Fernet key (32 bytes in URL-safe "
            'base64: python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())")'
        )
    return key.encode()


@lru_cache(maxsize=8)
def _box(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    if not keys:
        keys = (derived_key(secret_key),)
    return MultiFernet([Fernet(_check_key(key, n)) for n, key in enumerate(keys, start=1)])


def box() -> MultiFernet:
    """The configured keys, read at each use (tests and rotations change them)."""
    keys = tuple(k.strip() for k in settings.STUDIO_ENCRYPTION_KEYS if k.strip())
    return _box(keys, settings.SECRET_KEY)


def is_encrypted(stored: str) -> bool:
    return stored.startswith(PREFIX)


def encrypt(text: str) -> str:
    """``text`` as it is stored: empty stays empty (no secret), anything else ``fernet:<token>``."""
    if not text:
        return ""
    return PREFIX + box().encrypt(text.encode()).decode()


def decrypt(stored: str) -> str:
    """The text of a stored value; a plaintext one (no prefix) as it is. Raises Unreadable when no
    configured key decrypts it."""
    if not is_encrypted(stored):
        return stored
    try:
        return box().decrypt(stored.removeprefix(PREFIX).encode()).decode()
    except (InvalidToken, UnicodeDecodeError):
        raise Unreadable("no configured key decrypts the stored value") from None


def reencrypt(stored: str) -> str:
    """The stored value encrypted with the first key (a plaintext one encrypted). Raises
    Unreadable when no configured key decrypts it."""
    if not stored:
        return ""
    if not is_encrypted(stored):
        return encrypt(stored)
    try:
        return PREFIX + box().rotate(stored.removeprefix(PREFIX).encode()).decode()
    except InvalidToken:
        raise Unreadable("no configured key decrypts the stored value") from None
