"""Helpers of the integration tests (a module with a unique name: tests/ has no packages)."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from typing import Any


def wait_for_run(run_id: Any, *, timeout: float = 15.0, statuses: tuple[str, ...] | None = None) -> Any:
    """Poll the database until the run is terminal (or in one of ``statuses``); returns the run."""
    from execution.models import Run

    deadline = time.monotonic() + timeout
    while True:
        run = Run.objects.get(pk=run_id)
        if (statuses and run.status in statuses) or (not statuses and run.is_terminal):
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} is still {run.status} after {timeout} s")
        time.sleep(0.02)


def parse_sse(chunks: Any) -> Iterator[dict[str, Any]]:
    """Events of an SSE byte stream as dicts (``id``, ``event``, ``data``; ``comment`` for keep-alives)."""
    buffer = ""
    for chunk in chunks:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            event: dict[str, Any] = {}
            for line in block.split("\n"):
                if line.startswith(":"):
                    event["comment"] = line[1:].strip()
                elif ":" in line:
                    key, _, value = line.partition(":")
                    event[key] = value[1:] if value.startswith(" ") else value
            if "data" in event:
                event["data"] = json.loads(event["data"])
            yield event


def run_testgraph(*args: str) -> tuple[str, int]:
    """``manage.py testgraph ARGS``: (what it printed, its exit status)."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    out = io.StringIO()
    try:
        call_command("testgraph", *args, stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return out.getvalue(), exc.returncode
    return out.getvalue(), 0
