"""``servegraph FILE``: serve a graph over HTTP exactly as KServe's router does."""

from __future__ import annotations

import threading
from typing import Any

from django.core.management.base import BaseCommand

from execution.engine.server import GraphServer
from execution.management.cli import add_engine_arguments, engine_config, read_manifest, release_option


class Command(BaseCommand):
    help = (
        "Serve an InferenceGraph file like KServe's router: every path runs it; /readyz answers 200 "
        "(from KServe v0.15 on)."
    )

    def add_arguments(self, parser: Any) -> None:
        add_engine_arguments(parser)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8080, help="KServe's router listens on 8080")

    def handle(self, *args: Any, **opts: Any) -> None:
        release = release_option(opts)
        manifest = read_manifest(opts["file"], self.stderr, release)
        server = GraphServer(manifest, engine_config(opts), opts["host"], opts["port"]).start()
        self.stdout.write(
            f"Serving {manifest.name or 'the graph'} on {server.url} as KServe {release.name}'s router "
            "(Ctrl-C stops)"
        )
        self.stdout.flush()
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
