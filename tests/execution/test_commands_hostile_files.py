"""Hostile files given to ``import_graph``, ``testgraph FILE --cases TESTS`` and ``rungraph``: an
oversized file is refused from its size before it is read, and alias bombs, unknown tags, NUL
characters and lone surrogates are refused with the file's line and column, as the API refuses
them."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from graphs.models import Graph

pytestmark = pytest.mark.django_db

MB = 1024 * 1024

GRAPH = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: pets
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - serviceName: cat
"""

TESTS = """\
apiVersion: tests.inferencegraph.studio/v1alpha1
kind: InferenceGraphTest
graph: pets
cases:
- name: {name}
  expectations: [{{status: 200}}]
"""


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes no disk (all zeros: reading it costs its whole size)."""
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def command(name: str, *args: str) -> tuple[str, int]:
    err = io.StringIO()
    try:
        call_command(name, *args, stdout=io.StringIO(), stderr=err)
    except CommandError as exc:
        return err.getvalue() + str(exc), exc.returncode
    return err.getvalue(), 0


def peak_of(name: str, *args: str) -> tuple[str, int, int]:
    tracemalloc.start()
    try:
        said, code = command(name, *args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return said, code, peak


def test_import_graph_refuses_a_64_mib_file_from_its_size_without_reading_it(
    user: Any, tmp_path: Path
) -> None:
    said, code, peak = peak_of("import_graph", str(sparse(tmp_path / "big.yaml", 64 * MB)))
    assert code != 0 and "STUDIO_MAX_MANIFEST_BYTES" in said and "67,108,864 bytes" in said, said
    assert peak < 8 * MB, f"peak {peak / MB:.0f} MB"
    assert not Graph.objects.exists()


@pytest.mark.parametrize("which", ["graph", "cases"])
def test_testgraph_refuses_a_64_mib_file_from_its_size_without_reading_it(tmp_path: Path, which: str) -> None:
    graph = tmp_path / "pets.yaml"
    graph.write_text(GRAPH)
    cases = tmp_path / "pets.tests.yaml"
    cases.write_text(TESTS.format(name="a"))
    sparse(graph if which == "graph" else cases, 64 * MB)
    said, code, peak = peak_of("testgraph", str(graph), "--cases", str(cases))
    assert code == 2, said
    assert ("STUDIO_MAX_MANIFEST_BYTES" if which == "graph" else "MAX_BYTES") in said, said
    assert peak < 8 * MB, f"peak {peak / MB:.0f} MB"


def test_rungraph_refuses_a_64_mib_graph_file_from_its_size(tmp_path: Path) -> None:
    said, code, peak = peak_of("rungraph", str(sparse(tmp_path / "big.yaml", 64 * MB)))
    assert code == 2 and "STUDIO_MAX_MANIFEST_BYTES" in said, said
    assert peak < 8 * MB, f"peak {peak / MB:.0f} MB"


def test_a_file_just_under_the_limit_is_still_read(tmp_path: Path, settings: Any) -> None:
    settings.STUDIO_MAX_MANIFEST_BYTES = len(GRAPH.encode())
    graph = tmp_path / "pets.yaml"
    graph.write_text(GRAPH)
    cases = tmp_path / "pets.tests.yaml"
    cases.write_text(TESTS.format(name="a"))
    said, code = command(
        "testgraph", str(graph), "--cases", str(cases), "--service", "cat=http://127.0.0.1:9/"
    )
    assert "limit" not in said, said
    assert code == 1, said  # read, run, and failed: nothing listens on port 9


def test_testgraph_cases_with_an_alias_bomb_is_refused_with_line_and_column(tmp_path: Path) -> None:
    graph = tmp_path / "pets.yaml"
    graph.write_text(GRAPH)
    big = "x" * 32 * 1024
    lines = [
        "apiVersion: tests.inferencegraph.studio/v1alpha1",
        "kind: InferenceGraphTest",
        "graph: pets",
        "cases:",
        f"- name: &big {big}",
        "  request:",
        "    payload:",
        "      instances:",
        *(["      - *big"] * 1000),
    ]
    cases = tmp_path / "bomb.tests.yaml"
    cases.write_text("\n".join(lines) + "\n")
    said, code, peak = peak_of("testgraph", str(graph), "--cases", str(cases))
    assert code == 2 and "load.too-large-expanded" in said and "MAX_BYTES" in said, said
    assert f"{cases}:9:" in said, said
    assert peak < 24 * MB, f"peak {peak / MB:.0f} MB"


@pytest.mark.parametrize(
    ("name", "code"),
    [("!foo bar", "load.tag"), ('"a\\0b"', "load.unstorable-text"), ('"\\ud800"', "")],
)
def test_testgraph_cases_with_a_tag_a_nul_or_a_surrogate_is_exit_2_with_line_and_column(
    tmp_path: Path, name: str, code: str
) -> None:
    graph = tmp_path / "pets.yaml"
    graph.write_text(GRAPH)
    cases = tmp_path / "pets.tests.yaml"
    cases.write_text(TESTS.format(name=name))
    said, returncode = command("testgraph", str(graph), "--cases", str(cases))
    assert returncode == 2 and code in said and f"{cases}:5:" in said, said


def test_import_graph_refuses_a_nul_or_an_alias_bomb_and_imports_nothing(user: Any, tmp_path: Path) -> None:
    nul = tmp_path / "nul.yaml"
    nul.write_text(GRAPH.replace("  name: pets\n", '  name: pets\n  annotations: {a: "\\0"}\n'))
    said, code = command("import_graph", str(nul))
    assert code != 0 and "load.unstorable-text" in said and f"{nul}:5:" in said, said
    bomb = tmp_path / "bomb.yaml"
    big = "x" * 32 * 1024
    bomb.write_text(
        GRAPH.replace("  name: pets\n", f"  name: pets\n  annotations: {{a: &big {big}}}\n")
        + "".join(f"      - {{serviceName: s{i}, data: *big}}\n" for i in range(900))
    )
    said, code = command("import_graph", str(bomb))
    assert code != 0 and "load.too-large-expanded" in said, said
    assert not Graph.objects.exists()


def test_standard_input_is_read_one_byte_past_the_limit_at_most() -> None:
    from config.files import FileTooLarge, read_capped

    stdin = io.BytesIO(b"x" * 100)
    with pytest.raises(FileTooLarge, match=r"larger than 10 bytes, the limit \(SOME_SETTING\)"):
        read_capped("-", 10, "SOME_SETTING", stdin)
    assert stdin.tell() == 11
    assert read_capped("-", 10, "SOME_SETTING", io.BytesIO(b"x" * 10)) == b"x" * 10


def test_import_graph_reads_a_pipe_no_further_than_the_limit(
    user: Any, tmp_path: Path, settings: Any
) -> None:
    import os
    import threading

    settings.STUDIO_MAX_MANIFEST_BYTES = 1000
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    written: list[int] = []

    def feed() -> None:
        try:
            with fifo.open("wb") as pipe:
                for _ in range(100):
                    pipe.write(b"#" * 1000 + b"\n")
                    pipe.flush()
                    written.append(1)
        except BrokenPipeError:
            pass  # the reader closed the pipe: what this test wants

    writer = threading.Thread(target=feed)
    writer.start()
    said, code = command("import_graph", str(fifo))
    writer.join(timeout=10)
    assert code != 0 and "larger than 1,000 bytes" in said and "STUDIO_MAX_MANIFEST_BYTES" in said, said
    assert len(written) < 100  # the reader stopped and closed the pipe long before the end
