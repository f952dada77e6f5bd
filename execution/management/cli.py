"""What ``rungraph``, ``servegraph`` and ``loadgraph`` share: reading the graph file and the engine options."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from config.files import FileTooLarge, read_capped
from execution.engine import EngineConfig, UrlGuard
from execution.engine.headers import split_patterns
from graphs import language
from graphs.language.releases import DEFAULT_RELEASE, Release, UnknownRelease, get_release, release_names

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
        "--kserve-version",
        default=None,
        metavar="RELEASE",
        help="The KServe release whose router to reproduce and whose CRD to validate against: "
        + ", ".join(release_names())
        + f" (default {DEFAULT_RELEASE.name}, the newest)",
    )
    parser.add_argument(
        "--max-response-bytes",
        type=int,
        default=None,
        metavar="N",
        help="Fail a step whose answer is larger than N bytes (default: any size, as KServe)",
    )


def release_option(options: dict[str, Any], option: str = "kserve_version") -> Release:
    """The release ``--kserve-version`` (or another option) names; the newest when absent."""
    try:
        return get_release(options.get(option))
    except UnknownRelease as exc:
        flag = "--" + option.replace("_", "-")
        raise CommandError(f"{flag}: {exc}", returncode=EXIT_INVALID) from exc


def read_manifest(path: str, stderr: Any, release: Release | None = None) -> language.Manifest:
    """Parse and validate the file (for ``release``'s CRD too, when given); print every issue to
    ``stderr``; exit 2 on errors."""
    limit = settings.STUDIO_MAX_MANIFEST_BYTES
    try:
        text = read_capped(path, limit, "STUDIO_MAX_MANIFEST_BYTES", sys.stdin.buffer)
    except FileTooLarge as exc:
        raise CommandError(str(exc), returncode=EXIT_INVALID) from exc
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror}", returncode=EXIT_INVALID) from exc
    try:
        documents = language.load_documents(text, max_bytes=limit)
    except language.SpecError as exc:
        for issue in exc.issues:
            stderr.write(language.describe_issue(issue, path))
        raise CommandError(f"{path} is not a readable InferenceGraph.", returncode=EXIT_INVALID) from exc
    if len(documents) != 1:
        raise CommandError(
            f"{path} holds {len(documents)} graphs; give a file with exactly one.", returncode=EXIT_INVALID
        )
    manifest = language.manifest_from_document(documents[0].document, documents[0].positions)
    issues = language.validate(manifest, release)
    for issue in issues:
        stderr.write(language.describe_issue(issue, path))
    if language.has_errors(issues):
        raise CommandError(f"{path} has errors KServe would reject.", returncode=EXIT_INVALID)
    return manifest


def parse_header(value: str) -> tuple[str, str]:
    """``--header "Name: value"`` of ``rungraph`` and ``loadgraph``."""
    name, sep, content = value.partition(":")
    if not sep or not name.strip():
        raise CommandError(f'--header takes "Name: value", got {value!r}.', returncode=EXIT_INVALID)
    return name.strip(), content.strip()


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
        "release": extra.pop("release", None) or release_option(options),
    }
    if options.get("url_template"):
        kwargs["url_template"] = options["url_template"]
    # A developer's own machine: loopback and private model servers are fine, metadata never.
    guard = UrlGuard(allow_loopback=True, allow_private=True)
    return EngineConfig(guard=guard, **kwargs, **extra)
