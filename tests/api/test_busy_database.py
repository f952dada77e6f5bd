"""A database too busy to write answers 503 with Retry-After, never 500 (attack report item 7).

SQLite has one writer: while another process holds the write lock longer than the busy timeout,
a save fails with "database is locked". That is a temporary condition, not a server bug."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from graphs.models import Graph

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def locked_database() -> Iterator[None]:
    """Another connection holds SQLite's write lock; this one waits 100 ms before giving up."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's single write lock is what this test holds")
    connection.ensure_connection()
    connection.connection.execute("PRAGMA busy_timeout = 100")
    other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_save_into_a_locked_database_is_503_with_retry_after(
    api: APIClient, manifest: dict[str, Any], locked_database: None
) -> None:
    response = api.post("/api/graphs/", {"manifest": manifest}, format="json")
    assert response.status_code == 503, response.content
    assert int(response["Retry-After"]) >= 1
    body = response.json()
    assert "busy" in body["detail"] and body["issues"][0]["code"] == "server.database-busy"


def test_the_same_save_succeeds_once_the_lock_is_gone(api: APIClient, manifest: dict[str, Any]) -> None:
    response = api.post("/api/graphs/", {"manifest": manifest}, format="json")
    assert response.status_code == 201 and Graph.objects.filter(name="model-chainer").exists()
