"""What ``rungraph`` and ``servegraph`` share: reading the graph file and the engine options."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from execution.engine import EngineConfig, UrlGuard
from execution.engine.headers import split_patterns
from graphs import spec

# Exit status for an unusable graph file or bad arguments (docs/architecture.md: rungraph exits 2).
EXIT_INVALID = 2


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="InferenceGraph YAML or JSON ('-' reads stdin)")
    add_engine_options(parser)


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--service``, ``--url-template`` and ``--propagate-headers`` (what :func:`engine_config` reads)."""
    parser.add_argument(
        "--service",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="URL of a serviceName (repeatable); others use --url-template",
    )
    parser.add_argument(
        "--url-template",
        default=None,
        help="URL for unmapped serviceNames, with {name} and {namespace} "
        "(default: KServe's cluster-local predict URL)",
    )
    parser.add_argument(
        "--propagate-headers",
        default=None,
        metavar="REGEX[,REGEX...]",
        help="Client headers to forward to every step: KServe's PROPAGATE_HEADERS, split on every "
        "comma (an empty entry, as in 'A,', matches every header; absent: none)",
    )
    parser.add_argument(
        "--max-response-bytes",
        type=int,
        default=None,
        metavar="N",
        help="Fail a step whose answer is larger than N bytes (default: any size, as KServe)",
    )


def read_manifest(path: str, stderr: Any) -> spec.Manifest:
    """Parse and validate the file; print every issue to ``stderr``; exit 2 on errors."""
    try:
        text = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror}", returncode=EXIT_INVALID) from exc
    try:
        documents = spec.load_documents(text)
    except spec.SpecError as exc:
        for issue in exc.issues:
            stderr.write(spec.describe_issue(issue, path))
        raise CommandError(f"{path} is not a readable InferenceGraph.", returncode=EXIT_INVALID) from exc
    if len(documents) != 1:
        raise CommandError(
            f"{path} holds {len(documents)} graphs; give a file with exactly one.", returncode=EXIT_INVALID
        )
    manifest = spec.manifest_from_document(documents[0].document, documents[0].positions)
    issues = spec.validate(manifest)
    for issue in issues:
        stderr.write(spec.describe_issue(issue, path))
    if spec.has_errors(issues):
        raise CommandError(f"{path} has errors KServe would reject.", returncode=EXIT_INVALID)
    return manifest


def parse_services(values: list[str]) -> dict[str, str]:
    services: dict[str, str] = {}
    for value in values:
        name, sep, url = value.partition("=")
        if not sep or not name or not url:
            raise CommandError(f"--service takes NAME=URL, got {value!r}.", returncode=EXIT_INVALID)
        services[name.strip()] = url.strip()
    return services


def engine_config(options: dict[str, Any], **extra: Any) -> EngineConfig:
    """The engine configuration of ``rungraph``/``servegraph``; invalid header patterns are
    reported on stderr by the command (the run's warnings), as KServe logs and skips them."""
    value = options.get("propagate_headers")
    # As KServe's router reads PROPAGATE_HEADERS: Go's strings.Split keeps empty entries.
    patterns = split_patterns(value) if value is not None else ()
    limit = options.get("max_response_bytes")
    if limit is not None and limit <= 0:
        raise CommandError(
            f"--max-response-bytes takes a positive number, got {limit}.", returncode=EXIT_INVALID
        )
    kwargs: dict[str, Any] = {
        "service_urls": parse_services(options["service"]),
        "propagate_headers": patterns,
        # KServe's router reads answers of any size; the studio's cap is for shared test runs.
        "max_response_bytes": limit,
    }
    if options.get("url_template"):
        kwargs["url_template"] = options["url_template"]
    # A developer's own machine: loopback and private model servers are fine, metadata never.
    guard = UrlGuard(allow_loopback=True, allow_private=True)
    return EngineConfig(guard=guard, **kwargs, **extra)
