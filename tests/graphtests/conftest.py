"""Fixtures of the graph-test core and ``testgraph`` tests: loopback step servers, nothing else
(no database, Redis or Celery: the in-process mode must not need them)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "stepserver.py"
if "stepserver" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("stepserver", _PATH)
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["stepserver"] = _module
    _spec.loader.exec_module(_module)

from stepserver import StepServer  # noqa: E402


@pytest.fixture
def server() -> Iterator[StepServer]:
    """A fresh step server on a free loopback port."""
    with StepServer() as srv:
        yield srv
