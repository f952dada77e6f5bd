"""``python manage.py mockmodels [--port P] [--host H]``: the built-in mock model server."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from execution.devtools import mockmodels


class Command(BaseCommand):
    help = "Serve the deterministic demo models over KServe's v1 and v2 protocols (Ctrl-C stops it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=9010)
        parser.add_argument(
            "--config",
            help="JSON file of per-model knobs: {model or '*': {latency_ms, "
            "error_status, failure_rate, seed}}",
        )
        parser.add_argument("--verbose", action="store_true", help="log every request")

    def handle(self, *args: Any, **options: Any) -> None:
        mockmodels.run(
            options["host"], options["port"], options["config"], options["verbose"], out=self.stdout
        )
