"""``testgraph FILE.yaml --cases TESTS.yaml``: run a test file against a graph file, in-process.

No database, Redis or Celery: the graph and its cases are read from files, the engine runs here,
step URLs come from ``--service NAME=URL`` (and ``--url-template``) as for ``rungraph``. Prints one
line per case (in the file's order) and a summary; ``--junit OUT.xml`` writes a JUnit report.
Exit 0 when every case passed, 1 when any failed or could not run, 2 for invalid input.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Final

from django.core.management.base import BaseCommand, CommandError

from execution.cli import EXIT_INVALID, add_engine_options, engine_config, read_manifest
from execution.engine import DEFAULT_MAX_RESPONSE_BYTES
from execution.graphtests import (
    DEFAULT_CONCURRENCY,
    CaseResult,
    GraphTestSuite,
    TestSpecError,
    junit_xml,
    load_suite,
    run_suite_sync,
)
from execution.graphtests.report import case_lines, describe_issue, summary_line

# Exit status when a case failed or errored (DESIGN.md: testgraph exits 1).
EXIT_FAILED: Final = 1


class Command(BaseCommand):
    help = "Run a graph's test cases (kind: InferenceGraphTest) and report each case; exit 1 on failure."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("target", help="InferenceGraph YAML or JSON file")
        parser.add_argument("--cases", metavar="TESTS.yaml", help="The test file (kind: InferenceGraphTest)")
        add_engine_options(parser)
        parser.add_argument("--junit", metavar="OUT.xml", help="Write a JUnit XML report here")
        parser.add_argument(
            "--case", action="append", default=[], metavar="NAME", help="Run only this case (repeatable)"
        )
        parser.add_argument(
            "--concurrency", type=int, default=DEFAULT_CONCURRENCY, help="Cases in flight at once"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["cases"] is None:
            raise CommandError("Give the test file: --cases TESTS.yaml.", returncode=EXIT_INVALID)
        if opts["concurrency"] < 1:
            raise CommandError("--concurrency must be at least 1.", returncode=EXIT_INVALID)
        manifest = read_manifest(opts["target"], self.stderr)
        suite = self._read_suite(opts["cases"])
        if manifest.name and suite.graph != manifest.name:
            self.stderr.write(
                f"{opts['cases']}: warning: the cases are for graph {suite.graph!r}, "
                f"the file holds {manifest.name!r}"
            )
        cases = list(suite.cases)
        if opts["case"]:
            names = {case.name for case in cases}
            unknown = [name for name in opts["case"] if name not in names]
            if unknown:
                raise CommandError(
                    f"No case named {', '.join(map(repr, unknown))} in {opts['cases']}.",
                    returncode=EXIT_INVALID,
                )
            cases = [case for case in cases if case.name in opts["case"]]
        # Whole step responses in the trace, so that `path` expectations on a step see all of it.
        config = engine_config(opts, body_cap=DEFAULT_MAX_RESPONSE_BYTES)
        printed = 0
        done: dict[int, CaseResult] = {}

        def on_case(index: int, result: CaseResult) -> None:
            # Lines come out in the file's order, each as soon as every case before it is done.
            nonlocal printed
            done[index] = result
            while printed in done:
                for line in case_lines(done[printed]):
                    self.stdout.write(line)
                printed += 1

        started = time.monotonic()
        results = run_suite_sync(
            manifest,
            cases,
            config=config,
            concurrency=opts["concurrency"],
            on_case=on_case,
            keep_results=False,
        )
        seconds = time.monotonic() - started
        self.stdout.write(summary_line(results, seconds))
        if opts["junit"]:
            report = junit_xml(suite.graph, results, duration_ms=seconds * 1000)
            try:
                Path(opts["junit"]).write_bytes(report)
            except OSError as exc:
                raise CommandError(
                    f"Cannot write {opts['junit']}: {exc.strerror}", returncode=EXIT_INVALID
                ) from exc
        failed = sum(1 for r in results if r.outcome != "passed")
        if failed:
            raise CommandError(f"{failed} of {len(results)} cases did not pass.", returncode=EXIT_FAILED)

    def _read_suite(self, path: str) -> GraphTestSuite:
        try:
            text = Path(path).read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}", returncode=EXIT_INVALID) from exc
        try:
            return load_suite(text)
        except TestSpecError as exc:
            for issue in exc.issues:
                self.stderr.write(describe_issue(issue, path))
            raise CommandError(f"{path} is not a usable test file.", returncode=EXIT_INVALID) from exc
