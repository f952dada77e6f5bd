"""``manage.py loadgraph``: a load in this process against the real mock model server on loopback,
its summary, its JUnit report, its exit status (1 when a budget is exceeded, for CI), and a
``--header`` sent with every request to a step server that records what it got."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.stepserver import Reply, StepServer

pytestmark = pytest.mark.django_db


def graph_file(tmp_path: Path, mock: Any, latency_ms: int) -> Path:
    url = f"{mock.url}/v1/models/classifier:predict?latency_ms={latency_ms}"
    doc = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": "one-step"},
        "spec": {
            "nodes": {"root": {"routerType": "Sequence", "steps": [{"name": "classify", "serviceUrl": url}]}}
        },
    }
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def run(*args: str) -> tuple[int, str]:
    from io import StringIO

    out = StringIO()
    try:
        call_command("loadgraph", *args, stdout=out, stderr=StringIO())
    except CommandError as exc:
        return exc.returncode, out.getvalue()
    return 0, out.getvalue()


def test_a_budget_exceeded_fails_the_command_and_its_junit_report(tmp_path: Path, mock_server: Any) -> None:
    path = graph_file(tmp_path, mock_server, latency_ms=30)
    junit = tmp_path / "load.xml"
    summary = tmp_path / "load.json"
    code, out = run(
        str(path), "--requests", "40", "--concurrency", "4", "--budget", "graph=5",
        "--budget", "root/classify=1000", "--junit", str(junit), "--json", str(summary),
    )  # fmt: skip
    assert code == 1
    assert "40 requests in" in out and "budget graph: p95" in out and "EXCEEDED" in out
    report = ElementTree.parse(junit).getroot()
    assert report.get("tests") == "2" and report.get("failures") == "1"
    cases = {c.get("name"): c for c in report.iter("testcase")}
    assert cases["p95 of graph within 5.00 ms"].find("failure") is not None
    assert cases["p95 of root/classify within 1000.00 ms"].find("failure") is None
    written = json.loads(summary.read_text())
    assert (
        written["summary"]["completed"] == 40
        and written["summary"]["steps"]["root/classify"]["p50_ms"] >= 29.5
    )
    assert written["budgets"]["passed"] is False


def test_budgets_that_hold_pass(tmp_path: Path, mock_server: Any) -> None:
    path = graph_file(tmp_path, mock_server, latency_ms=1)
    junit = tmp_path / "load.xml"
    code, out = run(
        str(path), "--requests", "20", "--concurrency", "2", "--budget", "graph=5000", "--junit", str(junit)
    )
    assert code == 0 and "ok" in out
    assert ElementTree.parse(junit).getroot().get("failures") == "0"


def test_a_stored_graph_is_judged_by_its_own_budgets(mock_server: Any, graph: Any, local_env: Any) -> None:
    from graphs.models import Graph

    Graph.objects.filter(pk=graph.pk).update(latency_budgets={"graph_p95_ms": 0.001, "steps": {}})
    code, out = run("model-chainer", "--requests", "5", "--concurrency", "1", "--data", '{"instances": [1]}')
    assert code == 1 and "budget graph" in out


@pytest.mark.parametrize(
    "args",
    [
        ["--requests", "0", "--concurrency", "1"],
        ["--requests", "10", "--concurrency", "65"],
        ["--requests", "10001", "--concurrency", "1"],
        ["--requests", "1", "--concurrency", "1", "--budget", "graph=fast"],
        ["--requests", "1", "--concurrency", "1", "--budget", "nostep=5"],
    ],
)
def test_invalid_input_exits_2(tmp_path: Path, mock_server: Any, args: list[str]) -> None:
    path = graph_file(tmp_path, mock_server, latency_ms=0)
    assert run(str(path), *args)[0] == 2


def test_an_unknown_graph_exits_2(db: Any) -> None:
    assert run("no-such-graph", "--requests", "1", "--concurrency", "1")[0] == 2


def test_the_junit_report_of_an_unmeasured_budget_and_of_an_unanswered_load_is_schema_valid() -> None:
    """CI readers want a ``type`` on every ``<skipped>`` and ``<failure>`` (the JUnit schema
    ``testgraph --junit`` is held to)."""
    from execution.loadtests.report import junit_xml
    from tests.graphtests.junitschema import validate

    summary = {"elapsed_s": 1.5, "completed": 0}
    unmeasured = {
        "checks": [{"target": "root/classify", "budget_ms": 50.0, "measured_ms": None, "passed": None}]
    }
    validate(junit_xml("one-step", summary, unmeasured))
    validate(junit_xml("one-step", summary, {"checks": []}))
    failure = ElementTree.fromstring(junit_xml("one-step", summary, {"checks": []})).find(".//failure")
    assert failure is not None and failure.get("type") == "NoAnswer"


def test_header_goes_with_every_request_and_into_no_report(tmp_path: Path) -> None:
    """``--header`` as ``rungraph``'s: a model behind an auth header load tested from CI; the value
    reaches every step call (forwarded by ``--propagate-headers``) and no output holds it."""
    secret = "Bearer cli-s3cret-token"
    with StepServer() as server:
        server.route("/m", Reply(json={"predictions": [1]}))
        doc = {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "guarded"},
            "spec": {
                "nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": server.url("/m")}]}}
            },
        }
        path = tmp_path / "graph.yaml"
        path.write_text(yaml.safe_dump(doc))
        junit, summary = tmp_path / "load.xml", tmp_path / "load.json"
        code, out = run(
            str(path), "--requests", "6", "--concurrency", "2", "--header", f"Authorization: {secret}",
            "--propagate-headers", "^Authorization$", "--junit", str(junit), "--json", str(summary),
        )  # fmt: skip
        received = server.received("/m")
    assert code == 0, out
    assert [got.header("Authorization") for got in received] == [[secret]] * 6
    assert all(got.header("Content-Type") == ["application/json"] for got in received)
    for text in (out, junit.read_text(), summary.read_text()):
        assert "cli-s3cret" not in text
    assert run(str(path), "--requests", "1", "--concurrency", "1", "--header", "no colon")[0] == 2
