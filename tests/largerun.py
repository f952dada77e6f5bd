"""A large finished run made directly in the database (no worker, no step server): thousands of
stored steps and events, as a runaway graph (root -> b -> root, over and over) leaves them, for the
tests of what reads a run back (the API's pages, the console's replay)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from execution.models import Run, RunEvent, RunStep
from execution.rawinsert import insert_rows
from graphs.models import Graph

ERROR = "the run's deadline passed (a graph that calls itself)"


def call_id(i: int) -> str:
    """Step ``i``'s call id as the engine names a loop's calls: ``root/0``, then ``b#1/1``,
    ``root#2/0`` … (each node invocation numbered in the run, the step's index after the slash)."""
    node, index = ("root", 0) if i % 2 == 0 else ("b", 1)
    return f"{node}/{index}" if i == 0 else f"{node}#{i}/{index}"


def body(i: int) -> dict[str, Any]:
    value = {"instances": [[i, i + 1]]}
    return {"body": value, "encoding": "utf-8", "size": len(json.dumps(value)), "truncated": False}


def large_run(graph: Graph, user: Any, steps: int, *, status: str = Run.Status.FAILED) -> Run:
    """A finished run of ``graph``'s latest version with ``steps`` step calls (the last one failed),
    each with its ``step.started`` and ``step.finished`` events, between ``run.queued``,
    ``run.started`` and the terminal ``run.finished``."""
    now = timezone.now()
    version = graph.versions.order_by("-number").first()
    assert version is not None
    failed = status != Run.Status.SUCCEEDED
    with transaction.atomic():
        run = Run.objects.create(
            graph=graph,
            version=version,
            environment_name="local",
            status=status,
            request_body='{"instances": [[1, 2]]}',
            response_status=500 if failed else 200,
            response_content_type="application/json",
            response_body='{"error": "deadline"}' if failed else '{"ok": true}',
            response_size=21,
            error=ERROR if failed else "",
            seed=1,
            attempt=1,
            created_by=user,
            started_at=now - timedelta(seconds=30),
            finished_at=now,
            duration_ms=30000.0,
        )
        rows: list[RunStep] = []
        events: list[RunEvent] = []

        def event(type_: str, data: dict[str, Any]) -> None:
            events.append(RunEvent(run=run, seq=len(events) + 1, type=type_, data=data))

        event(
            "run.queued",
            {
                "graph": graph.name,
                "version": version.number,
                "environment": "local",
                "seed": 1,
                "rerun_of": None,
            },
        )
        event("run.started", {"attempt": 1, "worker": "test"})
        for i in range(steps):
            last = i == steps - 1 and failed
            node, index = ("root", 0) if i % 2 == 0 else ("b", 1)
            target = "http://model.test/v1/models/m:predict"
            where: dict[str, Any] = {
                "attempt": 1,
                "call_id": call_id(i),
                "parent_call_id": None,
                "node": node,
                "step_index": index,
                "step_name": f"step-{index}",
                "target": target,
                "at": now.timestamp(),
            }
            event("step.started", {**where, "kind": "http", "request": body(i)})
            event(
                "step.finished",
                {
                    **where,
                    "status": 500 if last else 200,
                    "response": body(i + 1),
                    "content_type": "application/json",
                    "duration_ms": 1.5,
                    "outcome": "http-error" if last else "ok",
                    "error": "HTTP 500" if last else None,
                },
            )
            rows.append(
                RunStep(
                    run=run,
                    attempt=1,
                    call_id=call_id(i),
                    order=len(events) - 1,
                    node=node,
                    step_index=index,
                    step_name=f"step-{index}",
                    kind="http",
                    target=target,
                    request=body(i),
                    status_code=500 if last else 200,
                    content_type="application/json",
                    response=body(i + 1),
                    outcome=RunStep.Outcome.HTTP_ERROR if last else RunStep.Outcome.OK,
                    error="HTTP 500" if last else "",
                    started_at=now,
                    finished_at=now,
                    duration_ms=1.5,
                )
            )
        event(
            "run.finished",
            {
                "attempt": 1,
                "status": status,
                "status_code": 500 if failed else 200,
                "content_type": "application/json",
                "response": None,
                "error": ERROR if failed else "",
                "duration_ms": 30000.0,
                "warnings": [],
            },
        )
        insert_rows(RunStep, rows)
        insert_rows(RunEvent, events)
        Run.objects.filter(pk=run.pk).update(event_seq=len(events))
    run.refresh_from_db()
    return run
