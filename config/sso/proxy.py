"""Sign-in by an authenticating proxy's identity header (oauth2-proxy's ``X-Auth-Request-Email`` or
``X-Forwarded-User``, Kubeflow's ``kubeflow-userid``, ...), trusted only from the proxy's addresses.

Django's RemoteUserMiddleware pattern with two changes: the header is believed only when the TCP peer
(``REMOTE_ADDR``, never ``X-Forwarded-For``, which any client can write) is inside
``STUDIO_PROXY_TRUSTED_NETWORKS``; from anywhere else the header is dropped, logged and audited, and
the request goes on as if it had none. As with RemoteUserMiddleware, a session the proxy made ends
on the first request without the header (or from an untrusted address), so a copied session cookie
is useless without going through the proxy. The session is an ordinary Django session: CSRF applies
to the browser's unsafe requests as with a password sign-in.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import RemoteUserBackend
from django.contrib.auth.middleware import RemoteUserMiddleware
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

from graphs.services import audit

logger = logging.getLogger(__name__)

BACKEND_PATH = "config.sso.proxy.TrustedProxyBackend"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def meta_key(header: str) -> str:
    """``X-Auth-Request-Email`` -> ``HTTP_X_AUTH_REQUEST_EMAIL`` (how WSGI servers name headers)."""
    return "HTTP_" + header.strip().upper().replace("-", "_")


@lru_cache(maxsize=8)
def parse_networks(networks: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    parsed = []
    for text in networks:
        try:
            parsed.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"STUDIO_PROXY_TRUSTED_NETWORKS: {text!r} is not a CIDR: {exc}"
            ) from exc
    return tuple(parsed)


def is_trusted(remote_addr: str) -> bool:
    try:
        address = ipaddress.ip_address(remote_addr)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:10.0.0.5 from a dual-stack socket
    return any(
        address in network for network in parse_networks(tuple(settings.STUDIO_PROXY_TRUSTED_NETWORKS))
    )


class TrustedProxyBackend(RemoteUserBackend):
    """Creates users at their first request with the least role: no password, not staff, no graph
    rights. Answers only while a proxy header is configured."""

    create_unknown_user = True

    def authenticate(self, request: HttpRequest | None, remote_user: str | None) -> Any:  # type: ignore[override]
        if not settings.STUDIO_PROXY_USER_HEADER or not remote_user:
            return None
        return super().authenticate(request, remote_user)

    def clean_username(self, username: str) -> str:
        return username.strip()

    def configure_user(self, request: HttpRequest | None, user: Any, created: bool = True) -> Any:
        if created:
            user.is_staff = False
            user.is_superuser = False
            user.set_unusable_password()
            user.save()
            logger.info("created user %s at their first request through the proxy", user.get_username())
        return user


class TrustedProxyUserMiddleware(RemoteUserMiddleware):
    """After AuthenticationMiddleware. A no-op while ``STUDIO_PROXY_USER_HEADER`` is empty."""

    # Django's async path reads another META key than its sync one; this runs sync (Django adapts it).
    async_capable = False  # type: ignore[assignment]

    def process_request(self, request: HttpRequest) -> None:
        header_name = settings.STUDIO_PROXY_USER_HEADER
        if not header_name:
            return
        key = meta_key(header_name)
        remote_addr = request.META.get("REMOTE_ADDR", "")
        if key in request.META and not is_trusted(remote_addr):
            claimed = str(request.META.pop(key))[:150]
            self._report_untrusted(request, remote_addr, header_name, claimed)
        elif key in request.META:
            username = request.META[key].strip()
            if not username or len(username) > get_user_model()._meta.get_field("username").max_length:  # type: ignore[operator]
                logger.warning(
                    "ignoring %s from the proxy at %s: empty or too long", header_name, remote_addr
                )
                del request.META[key]
            else:
                request.META[key] = username
        super().process_request(request)

    @property
    def header(self) -> str:  # type: ignore[override]
        """The META key RemoteUserMiddleware reads: from the setting, so tests can change it."""
        return meta_key(settings.STUDIO_PROXY_USER_HEADER)

    @staticmethod
    def _report_untrusted(request: HttpRequest, remote_addr: str, header_name: str, claimed: str) -> None:
        logger.warning(
            "ignored %s: %r from %s, which is not in STUDIO_PROXY_TRUSTED_NETWORKS",
            header_name,
            claimed,
            remote_addr,
        )
        # One audit row per address and claimed name per window: a client repeating the header on
        # every request must not fill the audit log.
        # Hashed: the claimed name is client-chosen text (see config.auth._key).
        digest = hashlib.sha256(f"{remote_addr}\n{claimed}".encode()).hexdigest()
        if cache.add(f"proxy-untrusted:{digest}", 1, settings.LOGIN_FAILURE_WINDOW):
            audit(
                None,
                "user.sign_in_refused",
                method="proxy",
                reason="untrusted address",
                remote_addr=remote_addr,
                claimed_user=claimed,
            )
