"""``testgraph``: run a graph's test cases in this process and report each case.

``testgraph FILE.yaml --cases TESTS.yaml [--service NAME=URL]...``: a manifest file and a test file
(``kind: InferenceGraphTest``), with no database, Redis or Celery; step URLs come from
``--service`` and ``--url-template`` as for ``rungraph``.

``testgraph NAME [--version N] [--environment E]``: the stored cases of graph NAME against a
version (default: the latest), each in ``--environment``, else its own, else the system default.
Runs in this process too (it reads the database; no Redis or Celery). With ``--workers`` it runs
as a suite run on the Celery workers instead (``execution.suites``, as the API starts one), which
is recorded: the version's green state and the export gate count it.

Both print one line per case (in order) and a summary, and write ``--junit OUT.xml`` on request.
A stored graph's latency budgets are judged on its cases (as a suite run judges them): a line and,
in the JUnit report, a test case per budget; a budget exceeded fails the run.
With ``--against OLD.yaml`` (files) or ``--against N`` (a stored version) every case also runs on
that graph, and under each case's line comes what changed since: status, routes, each step's
presence, status and payloads (the verdicts are this graph's alone).
With ``--kserve-version A --compare-with B`` every case also runs as KServe release B's router:
first come the changes the upgrade rules know for this graph, then under each case's line what
changed between the releases, and a case that does not pass under B fails the run too (a CI gate
for an upgrade).
Exit 0 when every case passed (and no budget was exceeded), 1 when any failed or could not run (or
a budget was exceeded), 2 for invalid input.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from django.core.management.base import BaseCommand, CommandError

from config.exceptions import ApplicationError
from config.files import FileTooLarge, read_capped
from execution.casecore import (
    DEFAULT_CONCURRENCY,
    MAX_BYTES,
    CaseDocumentError,
    CaseResult,
    ParsedCase,
    ParsedSuite,
    compare_runs,
    junit_xml,
    load_suite,
    observed_from_result,
    run_suite_sync,
)
from execution.casecore.latency import CaseLatencies
from execution.casecore.report import case_lines, comparison_lines, describe_issue, summary_line
from execution.cases.limits import judge_limits
from execution.engine import DEFAULT_MAX_RESPONSE_BYTES, EngineConfig
from execution.management.cli import (
    EXIT_INVALID,
    add_engine_options,
    engine_config,
    read_manifest,
    release_option,
)
from graphs.language import Manifest
from graphs.language.budgets import BudgetError, Budgets, parse_budgets
from graphs.language.release_rules import upgrade_changes
from graphs.language.releases import Release

# Exit status when a case failed or errored (docs/graph-tests.md: testgraph exits 1).
EXIT_FAILED: Final = 1

# (engine config, cases, their positions in the report)
Batch = tuple[EngineConfig, list[ParsedCase], list[int]]


class Command(BaseCommand):
    help = (
        "Run a graph's test cases (kind: InferenceGraphTest) and report each case; exit 1 on failure. "
        "FILE --cases TESTS.yaml runs a manifest file with no database: each serviceName is called at "
        "its --service NAME=URL, else at --url-template (default: KServe's cluster-local predict URL, "
        "http://{name}.{namespace}.svc.cluster.local/v1/models/{name}:predict, which resolves only "
        "inside the cluster); a case's environment is not used there. NAME runs a stored graph's cases "
        "in their environments (--environment for all of them)."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        # Our --version is the graph version, not Django's: let it replace the base option.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "target", help="InferenceGraph YAML/JSON file (with --cases), or a stored graph's name"
        )
        parser.add_argument("--cases", metavar="TESTS.yaml", help="The test file (kind: InferenceGraphTest)")
        add_engine_options(parser)
        parser.add_argument(
            "--version", type=int, dest="number", help="Stored graphs: the version (default: latest)"
        )
        parser.add_argument("--environment", help="Stored graphs: run every case in this environment")
        parser.add_argument("--junit", metavar="OUT.xml", help="Write a JUnit XML report here")
        parser.add_argument(
            "--workers",
            action="store_true",
            help="Stored graphs: run as a recorded suite run on the Celery workers (make run's) "
            "instead of in this process; --concurrency is then the suite run's",
        )
        parser.add_argument(
            "--user", help="With --workers: who the suite run is recorded as (default: the graph's owner)"
        )
        parser.add_argument(
            "--timeout", type=float, default=600.0, help="With --workers: seconds to wait for the suite run"
        )
        parser.add_argument(
            "--case", action="append", default=[], metavar="NAME", help="Run only this case (repeatable)"
        )
        parser.add_argument(
            "--concurrency", type=int, default=DEFAULT_CONCURRENCY, help="Cases in flight at once"
        )
        parser.add_argument(
            "--against",
            metavar="OLD.yaml|N",
            help="Also run every case on this graph file (file runs) or version N (stored graphs) and "
            "print what changed, step by step (status, route, payloads); the verdicts stay this graph's",
        )
        parser.add_argument(
            "--compare-with",
            metavar="RELEASE",
            help="Also run every case as this KServe release's router (the release is the changed "
            "variable): the upgrade rules' changes, what changed per case, and a case failing there fails",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["concurrency"] < 1:
            raise CommandError("--concurrency must be at least 1.", returncode=EXIT_INVALID)
        compare = release_option(opts, "compare_with") if opts["compare_with"] else None
        if compare is not None and (opts["against"] is not None or opts["workers"]):
            raise CommandError(
                "--compare-with changes the release and keeps the graph: not with --against or --workers.",
                returncode=EXIT_INVALID,
            )
        if opts["cases"] is None:
            if "." in opts["target"] or "/" in opts["target"]:  # no graph name holds either
                raise CommandError(
                    f"Give the test file of {opts['target']}: --cases TESTS.yaml (or name a stored graph).",
                    returncode=EXIT_INVALID,
                )
            if opts["workers"]:
                self._through_workers(opts)
                return
            name, manifest, batches, count = self._stored(opts)
            against = self._stored_against(opts)
            budgets = self._budgets
            if opts["kserve_version"]:
                release = release_option(opts)
                batches = [(dataclasses.replace(c, release=release), cases, at) for c, cases, at in batches]
        else:
            if opts["number"] is not None or opts["environment"] is not None or opts["workers"]:
                raise CommandError(
                    "--version and --environment are for stored graphs (so is --workers); a file run "
                    "takes --service.",
                    returncode=EXIT_INVALID,
                )
            name, manifest, batches, count = self._file(opts)
            against = read_manifest(opts["against"], self.stderr) if opts["against"] else None
            budgets = Budgets()
        if compare is not None:
            self._run_releases(name, manifest, batches, count, opts, compare)
            return
        self._run(name, manifest, batches, count, opts, against, budgets)

    # --- the two sources ---------------------------------------------------------------------------

    def _file(self, opts: dict[str, Any]) -> tuple[str, Manifest, list[Batch], int]:
        manifest = read_manifest(opts["target"], self.stderr, release_option(opts))
        suite = self._read_suite(opts["cases"])
        if manifest.name and suite.graph != manifest.name:
            self.stderr.write(
                f"{opts['cases']}: warning: the cases are for graph {suite.graph!r}, the file holds {manifest.name!r}"
            )
        cases = list(suite.cases)
        named = sorted({case.environment for case in cases if case.environment})
        if named:
            mapping = (
                "--service and --url-template"
                if opts["service"] or opts["url_template"]
                else "KServe's cluster-local URLs (no --service or --url-template given)"
            )
            self.stderr.write(
                f"{opts['cases']}: warning: cases name the environment(s) {', '.join(map(repr, named))}, "
                f"which a file run does not use: every step is called through {mapping}. "
                "Give --service NAME=URL or --url-template, or run the stored graph's cases by its name."
            )
        if opts["case"]:
            unknown = [n for n in opts["case"] if n not in {case.name for case in cases}]
            if unknown:
                raise CommandError(
                    f"No case named {', '.join(map(repr, unknown))} in {opts['cases']}.",
                    returncode=EXIT_INVALID,
                )
            cases = [case for case in cases if case.name in opts["case"]]
        # Whole step responses in the trace, so that `path` expectations on a step see all of it.
        config = engine_config(opts, body_cap=DEFAULT_MAX_RESPONSE_BYTES)
        return suite.graph, manifest, [(config, cases, list(range(len(cases))))], len(cases)

    def _stored(self, opts: dict[str, Any]) -> tuple[str, Manifest, list[Batch], int]:
        from execution.cases.local import prepare_stored_suite  # the database only in this mode

        if opts["service"] or opts["url_template"] or opts["propagate_headers"] is not None:
            raise CommandError(
                "--service, --url-template and --propagate-headers are for file runs; "
                "a stored graph runs in an environment (--environment).",
                returncode=EXIT_INVALID,
            )
        try:
            prepared = prepare_stored_suite(
                graph_name=opts["target"],
                number=opts["number"],
                environment=opts["environment"],
                case_names=opts["case"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.detail, returncode=EXIT_INVALID) from exc
        for note in prepared.notes:
            self.stderr.write(f"note: {note}")
        self.stdout.write(
            f"{prepared.graph.name} v{prepared.version.number}: {prepared.count} case(s) in "
            + ", ".join(group.environment for group in prepared.groups or [])
            + ("" if prepared.groups else "no environment")
        )
        batches = [(g.config, g.cases, g.indices) for g in prepared.groups]
        try:
            self._budgets = parse_budgets(prepared.graph.latency_budgets or None)
        except BudgetError as exc:  # stored before the rules were stricter: said, not judged
            self.stderr.write(f"note: the graph's latency budgets are not judged: {exc}")
            self._budgets = Budgets()
        return prepared.graph.name, prepared.manifest, batches, prepared.count

    def _stored_against(self, opts: dict[str, Any]) -> Manifest | None:
        from execution.cases.local import version_manifest

        if opts["against"] is None:
            return None
        if not opts["against"].isdigit():
            raise CommandError(
                "--against takes a version number for a stored graph.", returncode=EXIT_INVALID
            )
        try:
            return version_manifest(graph_name=opts["target"], number=int(opts["against"]))
        except ApplicationError as exc:
            raise CommandError(exc.detail, returncode=EXIT_INVALID) from exc

    def _read_suite(self, path: str) -> ParsedSuite:
        try:
            text = read_capped(path, MAX_BYTES, "MAX_BYTES of execution.casecore")
        except FileTooLarge as exc:
            raise CommandError(str(exc), returncode=EXIT_INVALID) from exc
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}", returncode=EXIT_INVALID) from exc
        try:
            return load_suite(text, limits=judge_limits())
        except CaseDocumentError as exc:
            for issue in exc.issues:
                self.stderr.write(describe_issue(issue, path))
            raise CommandError(f"{path} is not a usable test file.", returncode=EXIT_INVALID) from exc

    # --- running and reporting ---------------------------------------------------------------------

    def _printer(
        self, done: dict[int, CaseResult], extra: Callable[[int, CaseResult], list[str]]
    ) -> Callable[[int, CaseResult], None]:
        printed = 0

        def on_case(position: int, result: CaseResult) -> None:
            # Lines come out in the suite's order, each as soon as every case before it is done.
            nonlocal printed
            done[position] = result
            while printed in done:
                for line in [*case_lines(done[printed]), *extra(printed, done[printed])]:
                    self.stdout.write(line)
                printed += 1

        return on_case

    def _run(
        self,
        name: str,
        manifest: Manifest,
        batches: list[Batch],
        count: int,
        opts: dict[str, Any],
        against: Manifest | None = None,
        budgets: Budgets | None = None,
    ) -> None:
        before: dict[int, CaseResult] = {}
        if against is not None:
            for config, cases, positions in batches:
                run_suite_sync(
                    against, cases, config=config, concurrency=opts["concurrency"],
                    on_case=_placed(before.__setitem__, positions), limits=judge_limits(),
                )  # fmt: skip
        label = (
            opts["against"]
            if opts["against"] is None or not opts["against"].isdigit()
            else f"v{opts['against']}"
        )

        def changes(position: int, result: CaseResult) -> list[str]:
            old = before.get(position)
            if against is None or old is None or old.result is None or result.result is None:
                return []
            comparison = compare_runs(observed_from_result(old.result), observed_from_result(result.result))
            return comparison_lines(comparison, str(label))

        done: dict[int, CaseResult] = {}
        printer = self._printer(done, changes)
        judged = budgets is not None and not budgets.empty
        latencies = CaseLatencies()

        def report(position: int, result: CaseResult) -> None:
            if judged:  # the answer was kept for its latencies only: counted, then let go
                latencies.add(result)
                if against is None:
                    result = dataclasses.replace(result, result=None)
            printer(position, result)

        started = time.monotonic()
        for config, cases, positions in batches:
            run_suite_sync(
                manifest,
                cases,
                config=config,
                concurrency=opts["concurrency"],
                on_case=_placed(report, positions),
                keep_results=against is not None or judged,
                limits=judge_limits(),
            )
        verdict = latencies.verdict(budgets) if budgets is not None and judged else {}
        self._finish(name, [done[i] for i in range(count)], time.monotonic() - started, opts, verdict)

    def _run_releases(
        self,
        name: str,
        manifest: Manifest,
        batches: list[Batch],
        count: int,
        opts: dict[str, Any],
        other: Release,
    ) -> None:
        """Every case as the batches' release (its verdict first) and as ``other``, with what changed."""
        release = batches[0][0].release if batches else release_option(opts)
        self.stdout.write(f"KServe {release.name} -> {other.name}:")
        rules = upgrade_changes(manifest, release, other)
        for change in rules:
            self.stdout.write(f"  rule [{change.code}] {change.message}")
        if not rules:
            self.stdout.write("  no rule-known change for this graph; the cases tell the rest")
        theirs: dict[int, CaseResult] = {}
        for config, cases, positions in batches:
            run_suite_sync(
                manifest, cases, config=dataclasses.replace(config, release=other),
                concurrency=opts["concurrency"], on_case=_placed(theirs.__setitem__, positions),
                keep_results=True, limits=judge_limits(),
            )  # fmt: skip

        def changes(position: int, result: CaseResult) -> list[str]:
            old = theirs.get(position)
            if old is None:
                return []
            lines = [] if old.outcome == "passed" else [f"    on {other.name}: {old.outcome}"]
            if old.result is None or result.result is None:
                return lines
            comparison = compare_runs(observed_from_result(result.result), observed_from_result(old.result))
            return lines + comparison_lines(comparison, release.name)

        done: dict[int, CaseResult] = {}
        report = self._printer(done, changes)
        started = time.monotonic()
        for config, cases, positions in batches:
            run_suite_sync(
                manifest, cases, config=config, concurrency=opts["concurrency"],
                on_case=_placed(report, positions), keep_results=True, limits=judge_limits(),
            )  # fmt: skip
        failing = sum(1 for r in theirs.values() if r.outcome != "passed")
        if failing:
            self.stdout.write(f"on KServe {other.name}: {failing} of {len(theirs)} cases do not pass")
        self._finish(name, [done[i] for i in range(count)], time.monotonic() - started, opts)
        if failing:
            raise CommandError(
                f"{failing} of {len(theirs)} cases do not pass on KServe {other.name}.",
                returncode=EXIT_FAILED,
            )

    def _through_workers(self, opts: dict[str, Any]) -> None:
        """The stored suite as a suite run on the workers; lines as its cases finish, in order."""
        from execution.suites import selectors as suite_selectors
        from execution.suites.named import suite_start_named

        if opts["against"] is not None:
            raise CommandError(
                "--against compares in this process; with --workers, compare suite runs through the API "
                "(POST /api/graphs/NAME/suite-runs/compare/).",
                returncode=EXIT_INVALID,
            )
        started = time.monotonic()
        try:
            suite = suite_start_named(
                graph_name=opts["target"],
                number=opts["number"],
                environment=opts["environment"],
                case_names=opts["case"],
                username=opts["user"],
                concurrency=opts["concurrency"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.detail, returncode=EXIT_INVALID) from exc
        self.stdout.write(
            f"{suite.graph.name} v{suite.version.number}: suite run {suite.pk}, {suite.total} case(s) "
            f"in {suite.environment_name or 'each case its own environment'}, on the workers"
        )
        done: dict[int, CaseResult] = {}
        report = self._printer(done, lambda position, result: [])
        while True:
            rows = suite_selectors.finished_results(suite_id=suite.pk, after=done.keys())
            for position, result in rows:
                report(position, result)
            if len(done) == suite.total:
                break
            if time.monotonic() - started > opts["timeout"]:
                raise CommandError(
                    f"Suite run {suite.pk} did not finish within {opts['timeout']:g} s "
                    f"({len(done)} of {suite.total} cases); is a Celery worker running?",
                    returncode=EXIT_FAILED,
                )
            time.sleep(0.1)
        verdict = self._final_verdict(suite.pk, started, opts["timeout"])
        self._finish(
            suite.graph.name, [done[i] for i in range(suite.total)], time.monotonic() - started, opts, verdict
        )

    def _final_verdict(self, suite_id: Any, started: float, timeout: float) -> dict[str, Any]:
        """The suite run's budget verdict, written as it ends (just after its last case)."""
        from execution.suites import selectors as suite_selectors

        while (verdict := suite_selectors.finished_budgets(suite_id=suite_id)) is None:
            if time.monotonic() - started > timeout:
                raise CommandError(
                    f"Suite run {suite_id} did not finish within {timeout:g} s.", returncode=EXIT_FAILED
                )
            time.sleep(0.1)
        return verdict

    def _finish(
        self,
        name: str,
        results: list[CaseResult],
        seconds: float,
        opts: dict[str, Any],
        verdict: dict[str, Any] | None = None,
    ) -> None:
        """The summary line, each budget's, the JUnit file on request, and the exit status."""
        self.stdout.write(summary_line(results, seconds))
        for check in (verdict or {}).get("checks") or []:
            state = {True: "ok", False: "EXCEEDED", None: "not measured"}[check["passed"]]
            measured = "-" if check["measured_ms"] is None else f"{check['measured_ms']:.2f}"
            self.stdout.write(
                f"budget {check['target']}: p95 {measured} ms of {check['budget_ms']:.2f} ms: {state}"
            )
        if opts["junit"]:
            xml = junit_xml(name, results, duration_ms=seconds * 1000, budgets=verdict)
            try:
                Path(opts["junit"]).write_bytes(xml)
            except OSError as exc:
                raise CommandError(
                    f"Cannot write {opts['junit']}: {exc.strerror}", returncode=EXIT_INVALID
                ) from exc
        failed = sum(1 for r in results if r.outcome != "passed")
        if failed:
            raise CommandError(f"{failed} of {len(results)} cases did not pass.", returncode=EXIT_FAILED)
        if (verdict or {}).get("passed") is False:
            raise CommandError("A latency budget was exceeded.", returncode=EXIT_FAILED)


def _placed(
    report: Callable[[int, CaseResult], None], positions: list[int]
) -> Callable[[int, CaseResult], None]:
    """``report`` with a batch's case index turned into its position in the whole suite."""
    return lambda index, result: report(positions[index], result)
