"""``export_graph NAME``: write a version's deployable manifest to stdout (for kubectl apply -f -)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from config.exceptions import ApplicationError
from graphs import selectors, services


class Command(BaseCommand):
    help = "Export a graph version as KServe InferenceGraph YAML or JSON on stdout."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        # Our --version is the graph version, not Django's: let it replace the base option.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--version", type=int, dest="number", help="Version number (default: the latest)")
        parser.add_argument("--format", choices=["yaml", "json"], default="yaml")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            graph = selectors.graph_get(name=opts["name"], user=None)  # type: ignore[arg-type]
            if opts["number"] is None and graph.latest_version is None:
                raise CommandError(f"Graph {graph.name!r} has no versions.")
            number = opts["number"] if opts["number"] is not None else graph.latest_version.number  # type: ignore[union-attr]
            version = selectors.version_get(graph=graph, number=number)
            text, _ = services.version_export(graph=graph, version=version, fmt=opts["format"])
        except ApplicationError as exc:
            for issue in exc.issues:
                where = " ".join(f"{k}={issue[k]}" for k in ("node", "step_name", "path") if issue.get(k))
                self.stderr.write(
                    f"{issue['severity']}: [{issue['code']}] {issue['message']} {where}".rstrip()
                )
            raise CommandError(exc.detail) from exc
        self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
