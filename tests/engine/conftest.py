"""Fixtures for engine tests: loopback step servers and an httpx client.

``tests/stepserver.py`` is a plain module shared with the benchmarks; it is loaded by file path so
that no test directory has to be put on ``sys.path`` (that could shadow the real packages).
"""

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


@pytest.fixture
def server2() -> Iterator[StepServer]:
    """A second, independent step server."""
    with StepServer() as srv:
        yield srv
