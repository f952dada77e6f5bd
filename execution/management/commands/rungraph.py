"""``rungraph FILE``: run one request through a graph file and print ONE JSON object.

``{"status": int, "content_type": str|null, "body": <JSON value or text>, "trace": [...]}``.
Exit 0 whenever the graph produced a response (whatever its status), 2 for an invalid file or
arguments (issues on stderr).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from execution.engine import is_valid_json, run_graph_sync
from execution.management.cli import (
    EXIT_INVALID,
    add_engine_arguments,
    engine_config,
    parse_header,
    read_manifest,
    release_option,
)


class Command(BaseCommand):
    help = "Run one request through an InferenceGraph file with KServe router semantics."

    def add_arguments(self, parser: Any) -> None:
        add_engine_arguments(parser)
        data = parser.add_mutually_exclusive_group()
        data.add_argument("--data", help="Request body (sent as given, usually JSON)")
        data.add_argument("--data-file", help="Read the request body from this file ('-' for stdin)")
        parser.add_argument("--header", action="append", default=[], metavar='"Name: value"')
        parser.add_argument("--seed", type=int, help="Seed of the Splitter draws (for a repeatable run)")
        parser.add_argument("--timeout", type=float, help="Deadline for the whole request, in seconds")
        parser.add_argument("--step-timeout", type=float, help="Timeout of each step call, in seconds")

    def handle(self, *args: Any, **opts: Any) -> None:
        manifest = read_manifest(opts["file"], self.stderr, release_option(opts))
        if opts["data_file"] is not None:
            try:
                body = (
                    sys.stdin.buffer.read()
                    if opts["data_file"] == "-"
                    else Path(opts["data_file"]).read_bytes()
                )
            except OSError as exc:
                raise CommandError(
                    f"Cannot read {opts['data_file']}: {exc.strerror}", returncode=EXIT_INVALID
                ) from exc
        else:
            body = (opts["data"] or "").encode()
        headers = [parse_header(h) for h in opts["header"]]
        for option in ("timeout", "step_timeout"):
            if opts[option] is not None and opts[option] <= 0:
                raise CommandError(f"--{option.replace('_', '-')} must be positive.", returncode=EXIT_INVALID)
        config = engine_config(opts, deadline=opts["timeout"], step_timeout=opts["step_timeout"])
        rng = random.Random(opts["seed"]) if opts["seed"] is not None else random.Random()
        result = run_graph_sync(manifest, body, headers, config=config, rng=rng)
        if is_valid_json(result.body):
            shown: Any = json.loads(result.body)
        else:
            shown = result.body.decode("utf-8", errors="replace")
        output = {
            "status": result.status,
            "content_type": result.content_type,
            "body": shown,
            "trace": [event.as_dict() for event in result.trace],
        }
        self.stdout.write(json.dumps(output, ensure_ascii=False))
