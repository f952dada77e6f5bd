"""Fixtures of the execution service tests: no worker runs here (the integration tests have one),
so every test gets the quick run settings and a recorder of enqueued runs instead of a broker
(both in tests/conftest.py, shared with the run and environment API tests in tests/api/)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _runs_without_a_worker(quick_run_settings: None, enqueued: list) -> None:
    """Every test here: the session's Redis and mock server, task messages recorded, not sent."""
