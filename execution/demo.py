"""Demo data for the one-machine setup: a demo user (and, once runs land, environments and graphs)."""

from __future__ import annotations

from collections.abc import Iterator

from django.contrib.auth import get_user_model

DEMO_USER = "demo"
DEMO_PASSWORD = "demo-studio"  # noqa: S105 - the published demo login of the one-machine setup


def seed() -> Iterator[str]:
    """Create what is missing; yields a line for each thing created. Safe to call on every start."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=DEMO_USER, defaults={"is_staff": True})
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save()
        yield f"Created the demo user {DEMO_USER!r} (password {DEMO_PASSWORD!r})."
