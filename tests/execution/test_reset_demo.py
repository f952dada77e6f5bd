"""``manage.py reset_demo`` (``make reset-demo``): wipes the default SQLite
database and seeds the demo again, and refuses every other database."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from execution.devtools import demo
from execution.management.commands import reset_demo
from execution.models import Environment
from graphs.models import Graph

pytestmark = pytest.mark.django_db(transaction=True)


def test_another_database_is_refused_and_left_as_it_was() -> None:
    """The test database is not db.sqlite3: nothing is deleted."""
    get_user_model().objects.create_user("keep-me", password="x-pw-1")
    with pytest.raises(CommandError, match="only wipes the default SQLite database"):
        call_command("reset_demo")
    assert get_user_model().objects.filter(username="keep-me").exists()


def test_the_default_database_is_wiped_and_the_demo_seeded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # This test's database stands in for db.sqlite3.
    if connection.vendor != "sqlite":
        pytest.skip("reset_demo wipes only the default SQLite database; this pass runs on another")
    current = Path(str(connection.settings_dict["NAME"]))
    monkeypatch.setitem(settings.DATABASES["default"], "NAME", str(current))
    monkeypatch.setattr(reset_demo, "default_database", lambda: current)
    get_user_model().objects.create_user("leftover", password="x-pw-1")
    Environment.objects.create(name="leftover-env")

    call_command("reset_demo")

    assert not get_user_model().objects.filter(username="leftover").exists()
    assert not Environment.objects.filter(name="leftover-env").exists()
    assert get_user_model().objects.filter(username=demo.DEMO_USER).exists()
    assert Environment.objects.filter(name="local", system=True).exists()
    assert set(Graph.objects.values_list("name", flat=True)) == set(demo.DEMO_GRAPHS)
