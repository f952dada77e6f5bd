"""The demo graphs ship with test suites that pass against the mock model server, and one demo
version (cat-dog-breed v2) that fails a case, so a new user sees a red result and its diff."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from execution.devtools import demo
from execution.models import GraphCase
from graphs.models import Graph

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, int]:
    out = io.StringIO()
    try:
        call_command("testgraph", *args, stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return out.getvalue(), exc.returncode
    return out.getvalue(), 0


@pytest.fixture
def seeded(mock_server: Any) -> list[str]:
    return list(demo.seed())


def test_every_demo_graph_has_a_suite_that_passes_on_its_latest_version(seeded: list[str]) -> None:
    expected = {"face-recognition": 3, "cat-dog-breed": 2, "animal-switch": 3, "canary": 2}
    for name, count in expected.items():
        assert GraphCase.objects.filter(graph__name=name).count() == count
        assert f"Added {count} test cases to {name!r}." in seeded
        out, code = run(name)
        assert code == 0, out
        assert out.splitlines()[-1].startswith(f"{count} cases: {count} passed, 0 failed")


def test_the_broken_demo_version_fails_the_dog_case_with_the_reason(seeded: list[str]) -> None:
    graph = Graph.objects.get(name="cat-dog-breed")
    assert graph.latest_version is not None and graph.latest_version.number == 3
    assert graph.latest_version.manifest == demo.demo_manifest("cat-dog-breed")
    out, code = run("cat-dog-breed", "--version", "2")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "cat-dog-breed v2: 2 case(s) in local"
    assert lines[1].startswith("PASS  a cat stops after the classifier")
    assert lines[2].startswith("FAIL  a dog gets its breed  (200, ")
    assert "      expectations[2] step: step root/breed: skipped, expected 200" in lines
    assert any(
        line.startswith(
            '      expectations[3] path: predictions.0 in the final body is "dog", which does not match'
        )
        for line in lines
    )


def test_seeding_again_adds_nothing(seeded: list[str]) -> None:
    cases = GraphCase.objects.count()
    versions = Graph.objects.get(name="cat-dog-breed").versions.count()
    assert list(demo.seed()) == []
    assert GraphCase.objects.count() == cases
    assert Graph.objects.get(name="cat-dog-breed").versions.count() == versions == 3


@pytest.mark.parametrize("name", sorted(demo.DEMO_GRAPHS))
def test_the_demo_test_files_pass_in_process_from_files(name: str, mock_server: Any, tmp_path: Path) -> None:
    """The GitOps way: manifest and test file from disk, the mock server by --url-template, no
    stored graph at all."""
    graph = tmp_path / f"{name}.yaml"
    graph.write_text(yaml.safe_dump(demo.demo_manifest(name)))
    tests = tmp_path / f"{name}.tests.yaml"
    tests.write_text(demo.demo_tests(name))
    template = mock_server.url.rstrip("/") + "/v1/models/{name}:predict"
    out, code = run(
        str(graph), "--cases", str(tests), "--url-template", template, "--junit", str(tmp_path / "j.xml")
    )
    assert code == 0, out
    assert " 0 failed, 0 errors" in out.splitlines()[-1]


def test_against_the_good_version_shows_where_the_broken_one_differs(seeded: list[str]) -> None:
    out, code = run("cat-dog-breed", "--version", "2", "--against", "1")
    assert code == 1
    lines = out.splitlines()
    dog = lines.index(next(line for line in lines if line.startswith("FAIL  a dog gets its breed")))
    assert "      changed since v1:" in lines[dog:]
    assert "        step root/breed: status 200 -> None, outcome ok -> skipped" in lines[dog:]
    assert "      same as v1" in lines[:dog]
    _, code = run("cat-dog-breed", "--against", "9")
    assert code == 2
