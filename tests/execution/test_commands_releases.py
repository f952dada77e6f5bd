"""``--kserve-version`` on rungraph, servegraph, testgraph and loadgraph, ``testgraph --compare-with``,
and a load test run as its environment's release."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.stepserver import Reply, StepServer

ROOT = Path(__file__).resolve().parents[2]

# detect answers {"label": "cat"}; classify only runs for a dog: on a cat the condition is unmet.
GATED = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata: {{name: gated}}
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - {{name: detect, serviceUrl: "{url}/detect"}}
      - {{name: classify, serviceUrl: "{url}/classify", condition: 'label=="dog"'}}
"""

CASES = """\
kind: InferenceGraphTest
graph: gated
cases:
- name: a cat stops after detect
  request: {payload: {image: 1}}
  expectations:
  - status: 200
  - {path: label, equals: cat}
"""


@pytest.fixture
def steps() -> Any:
    with StepServer() as server:
        server.route("/detect", Reply(json={"label": "cat"}))
        server.route("/classify", Reply(json={"breed": "?"}))
        yield server


@pytest.fixture
def files(steps: StepServer, tmp_path: Path) -> tuple[Path, Path]:
    graph = tmp_path / "gated.yaml"
    graph.write_text(GATED.format(url=steps.url("").rstrip("/")))
    cases = tmp_path / "gated-tests.yaml"
    cases.write_text(CASES)
    return graph, cases


def command(name: str, *args: str) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(name, *args, stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), err.getvalue() + str(exc), exc.returncode
    return out.getvalue(), err.getvalue(), 0


def test_rungraph_runs_as_the_release_it_is_given(files: tuple[Path, Path]) -> None:
    graph, _ = files
    newest = json.loads(command("rungraph", str(graph), "--data", "{}")[0])
    old = json.loads(command("rungraph", str(graph), "--data", "{}", "--kserve-version", "v0.14.0")[0])
    assert (newest["status"], newest["body"]) == (200, {"label": "cat"})
    assert (old["status"], old["body"]) == (500, {"label": "cat"})  # before v0.15.1


def test_an_unknown_release_or_a_field_it_lacks_exits_2(files: tuple[Path, Path], tmp_path: Path) -> None:
    graph, _ = files
    _, err, code = command("rungraph", str(graph), "--kserve-version", "v0.10.0")
    assert code == 2 and "--kserve-version: unknown KServe release 'v0.10.0'" in err
    timed = tmp_path / "timed.yaml"
    timed.write_text(graph.read_text().replace("  nodes:", "  routerTimeouts: {serviceClient: 5}\n  nodes:"))
    assert command("rungraph", str(timed), "--data", "{}")[2] == 0
    _, err, code = command("rungraph", str(timed), "--kserve-version", "v0.13.1")
    assert code == 2
    assert "spec.routerTimeouts is not in KServe v0.13.1's InferenceGraph CRD (it arrived in v0.16.0)" in err


def test_testgraph_compare_with_names_the_change_and_fails_where_a_release_fails(
    files: tuple[Path, Path],
) -> None:
    graph, cases = files
    out, err, code = command(
        "testgraph",
        str(graph),
        "--cases",
        str(cases),
        "--kserve-version",
        "v0.14.1",
        "--compare-with",
        "master",
    )
    assert code == 1, out + err
    assert "KServe v0.14.1 -> master:" in out
    assert 'rule [unmet-condition-status] step classify of Sequence "root"' in out
    assert "changed since v0.14.1:" in out and "status 500 -> 200" in out
    # The other way round the newest release passes and the old one fails the gate.
    out, err, code = command("testgraph", str(graph), "--cases", str(cases), "--compare-with", "v0.14.1")
    assert code == 1 and "on KServe v0.14.1: 1 of 1 cases do not pass" in out
    assert "1 passed" in out or "passed" in out
    # Two releases with the same behaviour for this graph: both pass.
    out, _, code = command(
        "testgraph",
        str(graph),
        "--cases",
        str(cases),
        "--kserve-version",
        "v0.15.2",
        "--compare-with",
        "v0.19.0",
    )
    assert code == 0, out
    assert "no rule-known change for this graph" in out and "same as v0.15.2" in out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("release", "status", "readyz"), [("v0.14.1", 500, {"label": "cat"}), ("v0.15.2", 200, None)]
)
def test_servegraph_serves_the_release_s_router(
    files: tuple[Path, Path], release: str, status: int, readyz: Any
) -> None:
    """Before v0.15 GET /readyz runs the graph (here: the unmet condition's 500 of those releases);
    from v0.15 it answers 200 with no body."""
    graph, _ = files
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "servegraph",
            str(graph),
            "--port",
            str(port),
            "--kserve-version",
            release,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert f"as KServe {release}'s router" in proc.stdout.readline()
        deadline = time.monotonic() + 20
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert answer.status_code == status
        assert (answer.json() if answer.content else None) == readyz
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.django_db
def test_a_stored_graph_runs_as_its_environment_s_release_unless_told(steps: StepServer, user: Any) -> None:
    from execution.cases import services as case_services
    from execution.services import environments
    from graphs import services as graph_services
    from graphs.language import parse

    base = steps.url("").rstrip("/")
    graph = graph_services.graph_create(owner=user, manifest=parse(GATED.format(url=base)).document)
    environments.environment_create(owner=user, name="old", kserve_version="v0.14.1", allow_loopback=True)
    case_services.test_case_create(
        graph=graph,
        user=user,
        document={"name": "a cat", "request": {"payload": {"image": 1}}, "expectations": [{"status": 200}]},
    )
    out, _, code = command("testgraph", "gated", "--environment", "old")
    assert code == 1 and "1 failed" in out  # v0.14.1 answers the unmet condition with 500
    out, _, code = command("testgraph", "gated", "--environment", "old", "--kserve-version", "v0.15.2")
    assert code == 0, out


def _load_summary(tmp_path: Path, *args: str) -> tuple[dict[str, Any], str, int]:
    summary = tmp_path / "load.json"
    summary.unlink(missing_ok=True)
    out, err, code = command(
        "loadgraph", *args, "--requests", "6", "--concurrency", "2", "--json", str(summary)
    )
    written = json.loads(summary.read_text())["summary"] if summary.exists() else {}
    return written, out + err, code


def test_loadgraph_loads_a_file_as_the_release_it_is_given(files: tuple[Path, Path], tmp_path: Path) -> None:
    graph, _ = files
    newest, text, code = _load_summary(tmp_path, str(graph))
    assert code == 0 and newest["completed"] == 6 and newest["errors"] == 0, text
    old, text, code = _load_summary(tmp_path, str(graph), "--kserve-version", "v0.14.0")
    assert code == 0 and "as KServe v0.14.1's router" in text  # v0.14.0 runs the same router
    assert old["completed"] == 6 and old["errors"] == 6  # the unmet condition's 500 before v0.15.1
    assert old["graph"]["statuses"] == {"500": 6}
    timed = tmp_path / "timed.yaml"
    timed.write_text(graph.read_text().replace("  nodes:", "  routerTimeouts: {serviceClient: 5}\n  nodes:"))
    _, text, code = _load_summary(tmp_path, str(timed), "--kserve-version", "v0.13.1")
    assert code == 2
    assert "spec.routerTimeouts is not in KServe v0.13.1's InferenceGraph CRD (it arrived in v0.16.0)" in text
    _, text, code = _load_summary(tmp_path, str(graph), "--kserve-version", "v9")
    assert code == 2 and "--kserve-version: unknown KServe release 'v9'" in text


@pytest.mark.django_db
def test_loadgraph_loads_a_stored_graph_as_its_environment_s_release_unless_told(
    steps: StepServer, user: Any, tmp_path: Path
) -> None:
    from execution.services import environments
    from graphs import services as graph_services
    from graphs.language import parse

    base = steps.url("").rstrip("/")
    graph_services.graph_create(owner=user, manifest=parse(GATED.format(url=base)).document)
    environments.environment_create(owner=user, name="old", kserve_version="v0.14.1", allow_loopback=True)
    old, text, code = _load_summary(tmp_path, "gated", "--environment", "old")
    assert code == 0 and "as KServe v0.14.1's router" in text
    assert old["graph"]["statuses"] == {"500": 6}
    told, text, code = _load_summary(tmp_path, "gated", "--environment", "old", "--kserve-version", "v0.15.2")
    assert code == 0 and "as KServe v0.15.2's router" in text
    assert told["graph"]["statuses"] == {"200": 6}


@pytest.mark.django_db
def test_a_stored_graph_with_a_field_its_environment_s_release_lacks_is_not_load_tested(
    steps: StepServer, user: Any, tmp_path: Path
) -> None:
    from execution.services import environments
    from graphs import services as graph_services
    from graphs.language import parse

    timed = GATED.replace("  nodes:", "  routerTimeouts: {{serviceClient: 5}}\n  nodes:")
    graph_services.graph_create(
        owner=user, manifest=parse(timed.format(url=steps.url("").rstrip("/"))).document
    )
    environments.environment_create(owner=user, name="old", kserve_version="v0.15.2", allow_loopback=True)
    _, text, code = _load_summary(tmp_path, "gated", "--environment", "old")
    assert code == 2 and "errors KServe v0.15.2 would reject" in text
    assert "spec.routerTimeouts is not in KServe v0.15.2's InferenceGraph CRD" in text
    newest, text, code = _load_summary(
        tmp_path, "gated", "--environment", "old", "--kserve-version", "master"
    )
    assert code == 0 and newest["errors"] == 0, text


@pytest.mark.django_db
def test_a_load_test_runs_as_its_environment_s_release(steps: StepServer, user: Any) -> None:
    """The studio's load test keeps its environment's release in its config snapshot and its
    worker reproduces that release's router."""
    from execution.loadtests import services as load_services
    from execution.loadtests.models import LoadTest
    from execution.services import environments
    from graphs import services as graph_services
    from graphs.language import parse
    from graphs.models import GraphVersion

    graph = graph_services.graph_create(
        owner=user, manifest=parse(GATED.format(url=steps.url("").rstrip("/"))).document
    )
    version = GraphVersion.objects.filter(graph=graph).order_by("-number").first()
    assert version is not None
    statuses = {}
    for name, release in (("old", "v0.14.1"), ("new", "v0.15.2")):
        environment = environments.environment_create(
            owner=user, name=name, kserve_version=release, allow_loopback=True
        )
        load = load_services.load_test_start(
            graph=graph, version=version, user=user, requests=4, concurrency=2, environment=environment,
            payload={"image": 1},
        )  # fmt: skip
        assert load.config["kserve_version"] == release
        assert load_services.load_test_execute(load_id=str(load.pk)) == "done"
        done = LoadTest.objects.get(pk=load.pk)
        assert done.status == LoadTest.Status.FINISHED, done.error
        statuses[release] = done.summary["graph"]["statuses"]
    assert statuses == {"v0.14.1": {"500": 4}, "v0.15.2": {"200": 4}}
