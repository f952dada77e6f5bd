"""``testgraph FILE.yaml --cases TESTS.yaml``: in-process (no database, Redis or Celery: these tests
have no database access and no broker), one line per case, a summary, JUnit XML, exit 0/1/2."""

from __future__ import annotations

import io
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from junitschema import Invalid, validate
from stepserver import Reply

ROOT = Path(__file__).resolve().parents[2]

GRAPH = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: pets
spec:
  nodes:
    root:
      routerType: Switch
      steps:
      - name: cat
        serviceName: cat-model
        condition: '[@this].#(animal=="cat")'
      - name: dog
        serviceName: dog-model
        condition: '[@this].#(animal=="dog")'
"""

PASSING = """\
kind: InferenceGraphTest
graph: pets
cases:
- name: cat
  request: {payload: {animal: cat}, headers: {X-Trace: t1}}
  expectations:
  - status: 200
  - {body: {says: meow}, match: subset}
  - {route: root, took: cat}
- name: neither
  request: {payload: {animal: fish}}
  expectations:
  - status: 404
  - {route: root, took: null}
"""

FAILING = PASSING.replace(
    "match: subset}\n  - {route: root, took: cat}", "match: subset}\n  - {route: root, took: dog}"
).replace("- {body: {says: meow}, match: subset}", "- {body: {says: purr}}")


@pytest.fixture
def files(server: Any, tmp_path: Path) -> dict[str, str]:
    server.route("/cat", Reply(json={"says": "meow", "id": 1}))
    server.route("/dog", Reply(json={"says": "woof"}))
    graph = tmp_path / "pets.yaml"
    graph.write_text(GRAPH)
    passing = tmp_path / "passing.yaml"
    passing.write_text(PASSING)
    failing = tmp_path / "failing.yaml"
    failing.write_text(FAILING)
    return {
        "graph": str(graph),
        "passing": str(passing),
        "failing": str(failing),
        "cat": f"cat-model={server.url('/cat')}",
        "dog": f"dog-model={server.url('/dog')}",
        "junit": str(tmp_path / "out.xml"),
    }


def run(*args: str) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("testgraph", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), err.getvalue() + str(exc), exc.returncode
    return out.getvalue(), err.getvalue(), 0


def test_all_cases_passing_prints_a_line_each_a_summary_and_exits_0(
    files: dict[str, str], server: Any
) -> None:
    out, err, code = run(
        files["graph"], "--cases", files["passing"], "--service", files["cat"], "--service", files["dog"],
        "--junit", files["junit"],
    )  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines[:2]] == [["PASS", "cat"], ["PASS", "neither"]]
    assert lines[0].startswith("PASS  cat  (200, ") and lines[1].startswith("PASS  neither  (404, ")
    assert lines[2].startswith("2 cases: 2 passed, 0 failed, 0 errors in ")
    assert len(lines) == 3
    (call,) = server.received("/cat")
    assert call.json() == {"animal": "cat"}
    report = Path(files["junit"]).read_bytes()
    validate(report)
    suite = ET.fromstring(report).find("testsuite")
    assert suite is not None
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "pets",
        "2",
        "0",
        "0",
    )
    assert [c.get("name") for c in suite.iter("testcase")] == ["cat", "neither"]


def test_a_failing_case_shows_each_failed_expectation_with_its_diff_and_exits_1(
    files: dict[str, str],
) -> None:
    out, err, code = run(
        files["graph"], "--cases", files["failing"], "--service", files["cat"], "--service", files["dog"],
        "--junit", files["junit"],
    )  # fmt: skip
    assert code == 1
    assert "1 of 2 cases did not pass." in err
    assert out.splitlines() == [
        out.splitlines()[0],
        "      expectations[1] body: body differs from the expected value (2 difference(s))",
        '        {"path": "$.says", "op": "changed", "expected": "purr", "actual": "meow"}',
        '        {"path": "$.id", "op": "unexpected", "actual": 1}',
        "      expectations[2] route: Switch 'root' took cat, expected step dog",
        out.splitlines()[5],
        out.splitlines()[6],
    ]
    assert out.splitlines()[0].startswith("FAIL  cat  (200, ")
    assert out.splitlines()[5].startswith("PASS  neither")
    assert out.splitlines()[6].startswith("2 cases: 1 passed, 1 failed, 0 errors")
    report = Path(files["junit"]).read_bytes()
    validate(report)
    (failure,) = ET.fromstring(report).iter("failure")
    assert failure.get("message") == "body differs from the expected value (2 difference(s))"
    assert "expectations[2] (route): Switch 'root' took cat, expected step dog" in (failure.text or "")


def test_a_case_whose_steps_cannot_be_reached_fails_not_crashes(files: dict[str, str]) -> None:
    """Without --service the cluster-local URL cannot resolve here: the graph answers 500 and the
    case fails on its expectations (a routing failure is a result, not an error)."""
    out, _, code = run(
        files["graph"],
        "--cases",
        files["passing"],
        "--case",
        "cat",
        "--url-template",
        "http://127.0.0.1:9/{name}",
    )
    assert code == 1
    assert out.splitlines()[0].startswith("FAIL  cat  (500, ")
    assert "expectations[0] status: status 500, expected 200" in out


def test_a_failed_case_names_the_failing_step_and_its_cause_on_screen_and_in_junit(
    files: dict[str, str],
) -> None:
    """Not only "status 500, expected 200": which step failed and why, as the engine saw it."""
    out, _, code = run(
        files["graph"], "--cases", files["passing"], "--case", "cat",
        "--url-template", "http://127.0.0.1:9/{name}", "--junit", files["junit"],
    )  # fmt: skip
    assert code == 1
    lines = out.splitlines()
    assert lines[1] == "      expectations[0] status: status 500, expected 200"
    cause = next(line for line in lines if line.startswith("      failing step: "))
    assert cause.startswith('      failing step: cat (root/0): Post "http://127.0.0.1:9/cat-model": ')
    assert "refused" in cause.lower()
    report = Path(files["junit"]).read_bytes()
    validate(report)
    (failure,) = ET.fromstring(report).iter("failure")
    assert (failure.get("message") or "").startswith(
        'status 500, expected 200 (cat (root/0): Post "http://127.0.0.1:9/'
    )
    assert (failure.text or "").splitlines()[0] == cause.strip()


def test_a_step_that_answers_an_error_status_is_named_with_its_answer(
    files: dict[str, str], server: Any
) -> None:
    server.route("/busy", Reply(status=503, json={"error": "overloaded"}))
    out, _, code = run(
        files["graph"], "--cases", files["passing"], "--case", "cat",
        "--service", f"cat-model={server.url('/busy')}",
    )  # fmt: skip
    assert code == 1
    assert '      failing step: cat (root/0): answered 503: {"error": "overloaded"}' in out.splitlines()


def test_a_graph_that_fails_without_a_failing_step_names_the_router_error(
    files: dict[str, str], tmp_path: Path
) -> None:
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(PASSING.replace("  - status: 404\n", "  - status: 200\n"))
    out, _, code = run(files["graph"], "--cases", str(wrong), "--case", "neither")
    assert code == 1
    assert (
        "      failing step: graph: None of the routes matched with the switch condition" in out.splitlines()
    )


def test_a_passing_case_names_no_failing_step(files: dict[str, str]) -> None:
    """A 404 the case expects is no failure: nothing is blamed."""
    out, _, code = run(files["graph"], "--cases", files["passing"], "--case", "neither")
    assert code == 0
    assert "failing step" not in out


def test_a_file_run_warns_that_it_ignores_the_environments_the_cases_name(
    files: dict[str, str], tmp_path: Path
) -> None:
    named = tmp_path / "named.yaml"
    named.write_text(PASSING.replace("- name: neither\n", "- name: neither\n  environment: staging\n"))
    _, err, code = run(files["graph"], "--cases", str(named), "--case", "neither")
    assert code == 0
    assert f"{named}: warning: cases name the environment(s) 'staging', which a file run does not use" in err
    assert "KServe's cluster-local URLs (no --service or --url-template given)" in err
    _, err, _ = run(
        files["graph"],
        "--cases",
        str(named),
        "--case",
        "neither",
        "--url-template",
        "http://127.0.0.1:9/{name}",
    )
    assert "every step is called through --service and --url-template" in err
    # Cases without an environment: no warning.
    _, err, _ = run(files["graph"], "--cases", files["passing"], "--case", "neither")
    assert "warning" not in err


def test_help_says_how_a_file_run_maps_services() -> None:
    proc = subprocess.run(
        [sys.executable, "manage.py", "testgraph", "--help"],
        cwd=ROOT, capture_output=True, text=True,
        env={"DJANGO_SETTINGS_MODULE": "config.test_settings", "PATH": "/usr/bin:/bin"}, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "each serviceName is called at its --service NAME=URL, else at --url-template" in text
    assert "a case's environment is not used there" in text


def test_an_invalid_test_file_lists_every_issue_with_its_line_and_exits_2(
    files: dict[str, str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(PASSING.replace("- status: 200", "- status: 2000").replace("took: null", "took: [1]"))
    out, err, code = run(files["graph"], "--cases", str(bad))
    assert code == 2
    assert out == ""
    assert (
        f"{bad}:7:5: error: [expectation.status] status is an HTTP status code (100-599) (case 0 'cat', expectation 0)"
        in err
    )
    assert f"{bad}:14:19: error: [expectation.took]" in err
    assert f"{bad} is not a usable test file." in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{graph}"], "--cases TESTS.yaml (or name a stored graph)."),
        (
            ["{graph}", "--cases", "{passing}", "--version", "2"],
            "--version and --environment are for stored graphs",
        ),
        (["{graph}", "--cases", "/nonexistent/t.yaml"], "Cannot read /nonexistent/t.yaml"),
        (["/nonexistent/g.yaml", "--cases", "{passing}"], "Cannot read /nonexistent/g.yaml"),
        (["{graph}", "--cases", "{passing}", "--case", "horse"], "No case named 'horse'"),
        (["{graph}", "--cases", "{passing}", "--concurrency", "0"], "--concurrency must be at least 1."),
        (["{graph}", "--cases", "{passing}", "--service", "cat-model"], "--service takes NAME=URL"),
    ],
)
def test_invalid_input_exits_2(files: dict[str, str], args: list[str], message: str) -> None:
    _, err, code = run(*(a.format(**files) for a in args))
    assert code == 2
    assert message in err


def test_an_invalid_graph_file_exits_2(files: dict[str, str], tmp_path: Path) -> None:
    graph = tmp_path / "broken.yaml"
    graph.write_text(GRAPH.replace("routerType: Switch", "routerType: Swtich"))
    _, err, code = run(str(graph), "--cases", files["passing"])
    assert code == 2
    assert "has errors KServe would reject" in err


def test_selected_cases_only_and_lines_in_file_order_whatever_finishes_first(
    server: Any, files: dict[str, str]
) -> None:
    """The cat model is slow, so "neither" finishes first; the report still lists cat first."""
    server.route("/cat", Reply(json={"says": "meow"}, delay=0.3))
    out, _, code = run(files["graph"], "--cases", files["passing"], "--service", files["cat"])
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()[:2]] == ["cat", "neither"]
    out, _, code = run(files["graph"], "--cases", files["passing"], "--case", "neither")
    assert code == 0
    assert out.splitlines()[0].startswith("PASS  neither") and out.splitlines()[1].startswith(
        "1 case: 1 passed"
    )


def test_a_warning_when_the_cases_name_another_graph(files: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(PASSING.replace("graph: pets", "graph: birds"))
    _, err, code = run(files["graph"], "--cases", str(other), "--case", "neither")
    assert code == 0
    assert "warning: the cases are for graph 'birds', the file holds 'pets'" in err


def test_the_real_command_exits_1_on_failure_and_writes_junit(files: dict[str, str]) -> None:
    """As CI runs it: a separate process, its exit status, its report."""
    proc = subprocess.run(
        [
            sys.executable, "manage.py", "testgraph", files["graph"], "--cases", files["failing"],
            "--service", files["cat"], "--service", files["dog"], "--junit", files["junit"],
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"DJANGO_SETTINGS_MODULE": "config.test_settings", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "FAIL  cat" in proc.stdout
    validate(Path(files["junit"]).read_bytes())


def test_the_junit_validator_rejects_what_ci_readers_would_not_read() -> None:
    """The schema check is not vacuous: reports missing required parts are refused."""
    good = b'<testsuites><testsuite name="s" tests="1" failures="0" errors="0" time="0.1" timestamp="2026-01-01T00:00:00" hostname="h"><testcase name="a" classname="s" time="0.0"/></testsuite></testsuites>'
    validate(good)
    for bad in (
        good.replace(b' classname="s"', b""),
        good.replace(b'time="0.1"', b'time="fast"'),
        good.replace(b"2026-01-01T00:00:00", b"yesterday"),
        good.replace(b'time="0.0"/>', b'time="0.0"><failure/></testcase>'),
        good.replace(b"<testsuites>", b"<testsuitez>").replace(b"</testsuites>", b"</testsuitez>"),
        good.replace(b'time="0.0"/>', b'time="0.0"><error type="e"/><failure type="f"/></testcase>'),
    ):
        with pytest.raises(Invalid):
            validate(bad)


def test_against_an_older_file_prints_what_changed_step_by_step(
    files: dict[str, str], tmp_path: Path
) -> None:
    """The old graph sent cats to the dog model: the cat case shows the route, the steps and the
    body that changed; the fish case is the same on both."""
    old = tmp_path / "old.yaml"
    old.write_text(
        GRAPH.replace('animal=="cat"', "X")
        .replace('animal=="dog"', 'animal=="cat"')
        .replace("X", 'animal=="dog"')
    )
    out, err, code = run(
        files["graph"], "--cases", files["passing"], "--service", files["cat"], "--service", files["dog"],
        "--against", str(old),
    )  # fmt: skip
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith("PASS  cat")
    assert lines[1:7] == [
        f"      changed since {old}:",
        "        route root: ['dog'] -> ['cat']",
        "        step root/dog: no longer called",
        "        step root/cat: only now called",
        '        body {"path": "$.says", "op": "changed", "expected": "woof", "actual": "meow"}',
        '        body {"path": "$.id", "op": "unexpected", "actual": 1}',
    ]
    assert lines[7].startswith("PASS  neither")
    assert lines[8] == f"      same as {old}"
