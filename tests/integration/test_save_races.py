"""Concurrent edits never silently overwrite each other (docs/architecture.md, "Saving a version").

Runs on whichever database DATABASE_URL names: SQLite by default, PostgreSQL in CI's second pass.
"""

from __future__ import annotations

import copy
import threading
from collections import Counter
from typing import Any

import pytest
from django.db import connection

from graphs.models import GraphVersion
from tests.conftest import SEQUENCE_MANIFEST, client_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CLIENTS = 10
SAVES_PER_CLIENT = 100
SEQUENTIAL_SAVES = 1000


def edited(tag: str) -> dict[str, Any]:
    manifest = copy.deepcopy(SEQUENCE_MANIFEST)
    manifest["metadata"]["annotations"] = {"studio.test/edit": tag}
    return manifest


def latest_number(client: Any) -> int:
    etag = client.get("/api/graphs/model-chainer/")["ETag"]
    return int(etag.strip('"v'))


def test_racing_clients_from_stale_bases_lose_nothing(user: Any) -> None:
    api = client_for(user)
    assert api.post("/api/graphs/", {"manifest": SEQUENCE_MANIFEST}, format="json").status_code == 201
    results: list[tuple[int, str, int | None]] = []  # (status, tag, version number)
    lock = threading.Lock()
    start = threading.Barrier(CLIENTS)

    def client_loop(index: int) -> None:
        client = client_for(user)
        start.wait()
        try:
            for attempt in range(SAVES_PER_CLIENT):
                base = latest_number(client)
                tag = f"client-{index}-save-{attempt}"
                response = client.post(
                    "/api/graphs/model-chainer/versions/",
                    {"manifest": edited(tag), "message": tag},
                    format="json",
                    HTTP_IF_MATCH=f'"v{base}"',
                )
                number = response.json().get("number") if response.status_code == 201 else None
                with lock:
                    results.append((response.status_code, tag, number))
        finally:
            connection.close()

    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)

    statuses = Counter(status for status, _, _ in results)
    assert set(statuses) <= {201, 409}, statuses
    assert len(results) == CLIENTS * SAVES_PER_CLIENT
    versions = list(
        GraphVersion.objects.order_by("number").values_list("number", "message", "parent__number")
    )
    # exactly as many versions as 2xx answers (plus version 1), numbered without gaps
    assert len(versions) == 1 + statuses[201]
    assert [n for n, _, _ in versions] == list(range(1, len(versions) + 1))
    # every accepted save is the version it was told it is: no lost update
    saved = {number: tag for status, tag, number in results if status == 201}
    assert {n: m for n, m, _ in versions[1:]} == saved
    # each version was made on top of the one before it
    assert all(parent == number - 1 for number, _, parent in versions[1:])


def test_sequential_saves_from_one_client_never_conflict(user: Any) -> None:
    api = client_for(user)
    assert api.post("/api/graphs/", {"manifest": SEQUENCE_MANIFEST}, format="json").status_code == 201
    etag = '"v1"'
    for index in range(SEQUENTIAL_SAVES):
        response = api.post(
            "/api/graphs/model-chainer/versions/",
            {"manifest": edited(f"save-{index}")},
            format="json",
            HTTP_IF_MATCH=etag,
        )
        assert response.status_code == 201, (index, response.json())
        etag = response["ETag"]
    assert GraphVersion.objects.count() == SEQUENTIAL_SAVES + 1
