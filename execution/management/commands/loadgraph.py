"""``loadgraph``: load test a graph in this process and judge its latency budgets, for CI.

``loadgraph FILE --requests N --concurrency C [--budget graph=MS] [--budget node/step=MS]...
[--service NAME=URL]...``: a manifest file, with no database, Redis or Celery; step URLs from
``--service`` and ``--url-template`` as for ``rungraph``.

``loadgraph NAME --requests N --concurrency C [--version N] [--environment E]``: a stored graph's
version (default: the latest) in an environment (default: the system's), with the graph's own
latency budgets (``--budget`` overrides them one by one); reads the database only.

``--header "Name: value"`` (repeatable, as ``rungraph``'s): sent with every request (an
Authorization, an API key); steps get it as ``--propagate-headers`` (or the stored graph's
environment) forward it. Nothing this command writes holds a header.

``--kserve-version RELEASE``: the KServe release whose router to reproduce and whose CRD to validate
against; a file defaults to the newest release, a stored graph to its environment's.

Bounded like a load test started from the studio (``LOAD_TEST_MAX_REQUESTS``,
``LOAD_TEST_MAX_CONCURRENCY``, ``LOAD_TEST_MAX_SECONDS``). Prints the summary (throughput, error
rate, the graph's and each step's p50/p95/p99, each budget), writes ``--junit OUT.xml`` on request
(a test case per budget), and ``--json OUT.json`` with the whole summary. Exit 0 when every budget
held (or there is none), 1 when one was exceeded, 2 for invalid input.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import sys
from pathlib import Path
from typing import Any, Final

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from execution.engine import EngineConfig, make_client
from execution.engine.load import LoadOutcome, run_load
from execution.loadtests.report import junit_xml, summary_lines
from execution.management.cli import (
    EXIT_INVALID,
    add_engine_options,
    engine_config,
    parse_header,
    read_manifest,
    release_option,
)
from graphs.language import Manifest
from graphs.language.budgets import BudgetError, Budgets, judge, parse_budgets

EXIT_EXCEEDED: Final = 1


class Command(BaseCommand):
    help = "Load test a graph (N requests, C at a time) and judge its latency budgets; exit 1 when one is exceeded."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        # Our --version is the graph version, not Django's.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("target", help="InferenceGraph YAML/JSON file, or a stored graph's name")
        parser.add_argument("--requests", type=int, required=True, help="Requests to send")
        parser.add_argument("--concurrency", type=int, required=True, help="Requests in flight at once")
        data = parser.add_mutually_exclusive_group()
        data.add_argument("--data", default="{}", help="Request body (JSON; default {})")
        data.add_argument("--data-file", help="Read the request body from this file ('-' for stdin)")
        parser.add_argument(
            "--header",
            action="append",
            default=[],
            metavar='"Name: value"',
            help="A request header sent with every request (repeatable)",
        )
        parser.add_argument(
            "--budget",
            action="append",
            default=[],
            metavar="TARGET=MS",
            help="A p95 budget in ms: graph=250 or node/step=120 (repeatable; a stored graph's own "
            "budgets apply unless overridden)",
        )
        add_engine_options(parser)
        parser.add_argument(
            "--version", type=int, dest="number", help="Stored graphs: the version (default: latest)"
        )
        parser.add_argument("--environment", help="Stored graphs: the environment (default: the system's)")
        parser.add_argument("--seed", type=int, help="Seed of the Splitter draws")
        parser.add_argument("--junit", metavar="OUT.xml", help="Write the budget verdict as JUnit XML here")
        parser.add_argument(
            "--json", metavar="OUT.json", dest="json_out", help="Write the summary as JSON here"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        requests, concurrency = opts["requests"], opts["concurrency"]
        for option, value, setting in (
            ("requests", requests, "LOAD_TEST_MAX_REQUESTS"),
            ("concurrency", concurrency, "LOAD_TEST_MAX_CONCURRENCY"),
        ):
            cap = int(getattr(settings, setting))
            if not 1 <= value <= cap:
                raise CommandError(
                    f"--{option} must be between 1 and {cap} ({setting}).", returncode=EXIT_INVALID
                )
        body = self._body(opts)
        headers = [parse_header(value) for value in opts["header"]]
        if not any(name.lower() == "content-type" for name, _ in headers):
            headers.append(("Content-Type", "application/json"))
        target = opts["target"]
        if (
            Path(target).suffix.lower() in (".yaml", ".yml", ".json")
            or target == "-"
            or Path(target).exists()
        ):
            release = release_option(opts)
            manifest = read_manifest(target, self.stderr, release)
            config = engine_config(opts, release=release)
            budgets = Budgets()
            name = manifest.metadata.name or target
        else:
            manifest, config, budgets = self._stored(target, opts)
            name = target
        try:
            budgets = _override(budgets, opts["budget"])
        except BudgetError as exc:
            raise CommandError(str(exc), returncode=EXIT_INVALID) from exc
        self.stderr.write(f"Load testing {name} as KServe {config.release.name}'s router.")
        outcome = asyncio.run(
            _load(manifest, body, headers, config, requests, concurrency, random.Random(opts["seed"]))
        )
        summary = outcome.stats.summary(outcome.elapsed_s)
        verdict = judge(budgets, summary)
        if outcome.ended == "time-limit":
            self.stderr.write(
                f"Stopped after {settings.LOAD_TEST_MAX_SECONDS:g} s (LOAD_TEST_MAX_SECONDS) with "
                f"{outcome.completed} of {requests} requests answered."
            )
        for line in summary_lines(summary, verdict):
            self.stdout.write(line)
        if opts["junit"]:
            Path(opts["junit"]).write_bytes(junit_xml(f"loadgraph {name}", summary, verdict))
        if opts["json_out"]:
            Path(opts["json_out"]).write_text(json.dumps({"summary": summary, "budgets": verdict}, indent=2))
        if verdict["passed"] is False:
            raise CommandError("A latency budget was exceeded.", returncode=EXIT_EXCEEDED)

    def _body(self, opts: dict[str, Any]) -> bytes:
        if opts["data_file"] is None:
            return str(opts["data"]).encode()
        try:
            return (
                sys.stdin.buffer.read() if opts["data_file"] == "-" else Path(opts["data_file"]).read_bytes()
            )
        except OSError as exc:
            raise CommandError(
                f"Cannot read {opts['data_file']}: {exc.strerror}", returncode=EXIT_INVALID
            ) from exc

    def _stored(self, name: str, opts: dict[str, Any]) -> tuple[Manifest, EngineConfig, Budgets]:
        from execution.models import Environment
        from execution.services import environments
        from graphs import language
        from graphs.models import Graph, GraphVersion

        graph = Graph.objects.filter(name=name).first()
        if graph is None:
            raise CommandError(f"There is no file or stored graph {name!r}.", returncode=EXIT_INVALID)
        versions = GraphVersion.objects.filter(graph=graph)
        version = (
            versions.filter(number=opts["number"]).first()
            if opts["number"]
            else versions.order_by("-number").first()
        )
        if version is None:
            raise CommandError(f"Graph {name!r} has no version {opts['number']}.", returncode=EXIT_INVALID)
        if opts["environment"]:
            environment = Environment.objects.filter(name=opts["environment"]).first()
            if environment is None:
                raise CommandError(
                    f"There is no environment {opts['environment']!r}.", returncode=EXIT_INVALID
                )
        else:
            environment, _ = environments.ensure_local_environment()
        # The environment's release unless --kserve-version names another.
        snapshot = environments.environment_config(
            environment, kserve_version=release_option(opts).name if opts["kserve_version"] else None
        )
        config = environments.engine_config(snapshot, graph_namespace=graph.namespace)
        manifest = language.manifest_from_document(version.manifest)
        issues = language.validate(manifest, config.release)
        for issue in issues:
            if issue.severity == "error":
                self.stderr.write(language.describe_issue(issue, f"{name} v{version.number}"))
        if language.has_errors(issues):
            raise CommandError(
                f"Version {version.number} of {name!r} has errors KServe {config.release.name} would reject.",
                returncode=EXIT_INVALID,
            )
        try:
            budgets = parse_budgets(graph.latency_budgets or None)
        except BudgetError:
            budgets = Budgets()
        return manifest, config, budgets


def _override(budgets: Budgets, values: list[str]) -> Budgets:
    graph_ms = budgets.graph_p95_ms
    steps = dict(budgets.steps)
    for value in values:
        target, sep, ms = value.partition("=")
        try:
            number = float(ms)
        except ValueError:
            number = float("nan")
        if not sep or not target:
            raise BudgetError([{"path": "--budget", "message": f"--budget takes TARGET=MS, got {value!r}"}])
        if target == "graph":
            graph_ms = number
        else:
            steps[target] = number
    return parse_budgets({"graph_p95_ms": graph_ms, "steps": steps})


async def _load(
    manifest: Manifest,
    body: bytes,
    headers: list[tuple[str, str]],
    config: EngineConfig,
    requests: int,
    concurrency: int,
    rng: random.Random,
) -> LoadOutcome:
    config = dataclasses.replace(config, body_cap=0, max_event_bytes=None)
    async with make_client(
        timeout=config.step_timeout or 60.0, guard=config.guard, max_response_bytes=config.max_response_bytes,
        max_connections=256,
    ) as client:  # fmt: skip
        return await run_load(
            manifest, body, headers, config=config, client=client,
            requests=requests, concurrency=concurrency, max_seconds=float(settings.LOAD_TEST_MAX_SECONDS), rng=rng,
        )  # fmt: skip
