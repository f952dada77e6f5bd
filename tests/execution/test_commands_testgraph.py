"""``testgraph NAME``: a stored graph's cases against one of its versions, in an environment, in
this process (the database is read; no broker or worker is involved)."""

from __future__ import annotations

import copy
import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from execution.cases import services as case_services
from execution.services import environments
from graphs import services as graph_services
from tests.graphtests.junitschema import validate
from tests.stepserver import Reply, StepServer

pytestmark = pytest.mark.django_db

PETS: dict[str, Any] = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "pets"},
    "spec": {
        "nodes": {
            "root": {
                "routerType": "Switch",
                "steps": [
                    {"name": "cat", "serviceName": "cat", "condition": '[@this].#(animal=="cat")'},
                    {"name": "dog", "serviceName": "dog", "condition": '[@this].#(animal=="dog")'},
                ],
            }
        }
    },
}


def run(*args: str) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("testgraph", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), err.getvalue() + str(exc), exc.returncode
    return out.getvalue(), err.getvalue(), 0


@pytest.fixture
def steps() -> Any:
    with StepServer() as server:
        server.route("/cat", Reply(json={"says": "meow"}))
        server.route("/dog", Reply(json={"says": "woof"}))
        yield server


@pytest.fixture
def stored(user: Any, steps: Any) -> Any:
    """Graph pets (v1: cat and dog; v2: cat only), environment "steps", two cases."""
    graph = graph_services.graph_create(owner=user, manifest=PETS)
    environments.environment_create(
        owner=user,
        name="steps",
        service_urls={"cat": steps.url("/cat"), "dog": steps.url("/dog")},
        allow_loopback=True,
    )
    for document in (
        {
            "name": "cat",
            "request": {"payload": {"animal": "cat"}, "headers": {"Authorization": "Bearer s3cret"}},
            "expectations": [
                {"status": 200},
                {"path": "says", "equals": "meow"},
                {"route": "root", "took": "cat"},
            ],
        },
        {
            "name": "dog",
            "environment": "steps",
            "request": {"payload": {"animal": "dog"}},
            "expectations": [{"status": 200}, {"step": "root/dog", "status": 200}],
        },
    ):
        case_services.test_case_create(graph=graph, user=user, document=document)
    cat_only = copy.deepcopy(PETS)
    cat_only["spec"]["nodes"]["root"]["steps"].pop()
    graph_services.graph_version_create(
        graph=graph, manifest=cat_only, layout={}, author=user, message="no dogs", base_version=1
    )
    return graph


def test_stored_cases_pass_on_the_version_they_were_written_for(
    stored: Any, steps: Any, tmp_path: Path
) -> None:
    junit = tmp_path / "out.xml"
    out, err, code = run("pets", "--version", "1", "--environment", "steps", "--junit", str(junit))
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0] == "pets v1: 2 case(s) in steps"
    assert lines[1].startswith("PASS  cat  (200, ") and lines[2].startswith("PASS  dog  (200, ")
    assert lines[3].startswith("2 cases: 2 passed, 0 failed, 0 errors")
    assert "note: case 'cat': header Authorization is stored redacted and is not sent" in err
    (cat_call,) = steps.received("/cat")
    assert cat_call.header("Authorization") == []
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "0")


def test_a_case_naming_a_step_the_latest_version_dropped_fails_with_that_reason(stored: Any) -> None:
    out, err, code = run("pets", "--environment", "steps")
    assert code == 1
    assert "1 of 2 cases did not pass." in err
    assert out.splitlines()[0] == "pets v2: 2 case(s) in steps"
    assert "expectations[1] step: node 'root' has no step 'dog' (its steps: cat)" in out
    assert "expectations[0] status: status 404, expected 200" in out


def test_each_case_runs_in_its_own_environment_by_default(stored: Any, mock_server: Any) -> None:
    """Without --environment, "dog" names "steps" and "cat" none: the system default (the mock
    model server, which has no model called cat: the case fails there)."""
    out, _, code = run("pets", "--version", "1")
    assert code == 1
    assert out.splitlines()[0] == "pets v1: 2 case(s) in local, steps"
    assert out.splitlines()[1].startswith("FAIL  cat") and any(
        line.startswith("PASS  dog") for line in out.splitlines()
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["birds"], "There is no graph named 'birds'."),
        (["pets", "--version", "9"], "Graph 'pets' has no version 9."),
        (["pets", "--environment", "moon"], "There is no environment 'moon'."),
        (["pets", "--case", "horse"], "Graph 'pets' has no test case named 'horse'."),
        (["pets", "--service", "cat=http://127.0.0.1:1/"], "are for file runs"),
    ],
)
def test_invalid_input_exits_2(stored: Any, args: list[str], message: str) -> None:
    out, err, code = run(*args)
    assert code == 2
    assert message in err
    assert out == ""


def test_a_stored_graphs_latency_budgets_are_judged_and_reported_in_junit(
    stored: Any, steps: Any, tmp_path: Path
) -> None:
    stored.latency_budgets = {"graph_p95_ms": 60_000, "steps": {"root/cat": 0.001, "root/bird": 50}}
    stored.save(update_fields=["latency_budgets"])
    junit = tmp_path / "out.xml"
    out, err, code = run("pets", "--version", "1", "--environment", "steps", "--junit", str(junit))
    assert code == 1, out + err  # every case passed; a budget did not hold
    assert "A latency budget was exceeded." in err
    assert "budget graph: p95 " in out and " of 60000.00 ms: ok" in out
    assert any(
        line.startswith("budget root/cat: p95 ") and line.endswith(": EXCEEDED") for line in out.splitlines()
    )
    assert "budget root/bird: p95 - ms of 50.00 ms: not measured" in out
    validate(junit.read_bytes())  # still what CI readers take
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "1", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["latency budget: p95 of graph within 60000.00 ms"].find("failure") is None
    failure = cases["latency budget: p95 of root/cat within 0.00 ms"].find("failure")
    assert failure is not None and failure.get("type") == "LatencyBudgetExceeded"
    assert cases["latency budget: p95 of root/bird within 50.00 ms"].find("skipped") is not None


def test_budgets_that_hold_pass_and_none_add_no_test_case(stored: Any, steps: Any, tmp_path: Path) -> None:
    junit = tmp_path / "out.xml"
    assert run("pets", "--version", "1", "--environment", "steps", "--junit", str(junit))[2] == 0
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2"
    stored.latency_budgets = {"graph_p95_ms": 60_000}
    stored.save(update_fields=["latency_budgets"])
    out, err, code = run("pets", "--version", "1", "--environment", "steps", "--junit", str(junit))
    assert code == 0, out + err
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("3", "0")
