"""A run's request: its body and headers, checked, and its secret header values kept out of the
database.

Request headers are secret unless known to be harmless (:data:`SAFE_HEADERS`: Content-Type,
Accept, User-Agent, tracing ids…) and not marked secret by the run's environment; secret ones are
stored in the database redacted (``Bearer ***``). Their real values go to Redis under
``run:{id}:secret-headers`` with a TTL (``RUN_SECRET_HEADERS_TTL``, 1 hour) for the worker to pick
up; the Celery message carries the run id only. If they have expired when the worker starts (or
Redis lost them), the redacted headers are not sent at all, and the run's events say so. Load
tests split their headers the same way (``execution.loadtests.services``), under keys of their own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from config.exceptions import TooDeep
from config.nesting import nesting_exceeds
from execution.engine.config import REDACTED as ENGINE_REDACTED
from execution.errors import InvalidInput
from graphs.language import issue_dict

# Request headers known to carry no secret (lower case). Every other header is stored redacted: a
# deny list by name let ``X-Credentials`` through. Content negotiation, client identification and
# the W3C Trace Context, B3 and request-id tracing headers that meshes such as Istio forward.
SAFE_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "content-encoding",
        "content-language",
        "content-type",
        "user-agent",
        "x-request-id",
        "x-correlation-id",
        "traceparent",
        "tracestate",
        "b3",
        "x-b3-traceid",
        "x-b3-spanid",
        "x-b3-parentspanid",
        "x-b3-sampled",
        "x-b3-flags",
    }
)
HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # RFC 9110 token
REDACTED = ENGINE_REDACTED


def issue(path: str, message: str, code: str = "environment.invalid") -> dict[str, Any]:
    return issue_dict(code, message, path=path)


def is_secret_header(name: str, also_secret: Collection[str] = ()) -> bool:
    """Whether a request header's value is kept out of the database: every name but the harmless
    ones (:data:`SAFE_HEADERS`), and those too when ``also_secret`` (lower case) names them."""
    lowered = name.lower()
    return lowered not in SAFE_HEADERS or lowered in also_secret


def redact_value(value: str) -> str:
    """``Bearer abc`` -> ``Bearer ***``; anything else -> ``***`` (:data:`REDACTED`)."""
    scheme, sep, _ = value.partition(" ")
    if sep and scheme.isalpha() and len(scheme) <= 20:
        return f"{scheme} {REDACTED}"
    return REDACTED


def split_secret_headers(
    headers: Mapping[str, str], also_secret: Collection[str] = ()
) -> tuple[dict[str, str], dict[str, str]]:
    """(headers with secret values redacted, {name: real value} of the secret ones).

    ``also_secret``: lower-case names the environment marks secret although they are harmless.
    """
    stored: dict[str, str] = {}
    secrets: dict[str, str] = {}
    for name, value in headers.items():
        if is_secret_header(name, also_secret):
            stored[name] = redact_value(value)
            secrets[name] = value
        else:
            stored[name] = value
    return stored, secrets


def check_headers(headers: Mapping[str, Any]) -> dict[str, str]:
    issues = []
    for name, value in headers.items():
        if not isinstance(name, str) or not HEADER_NAME.match(name):
            issues.append(
                issue(f"headers.{name}", f"{name!r} is not a valid header name", "run.invalid-header")
            )
        elif not isinstance(value, str) or "\r" in value or "\n" in value:
            issues.append(
                issue(f"headers.{name}", "a header value must be a single-line string", "run.invalid-header")
            )
    if issues:
        raise InvalidInput(issues[0]["message"], issues=issues)
    return {str(k): str(v) for k, v in headers.items()}


def payload_text(payload: Any, content_type: str | None) -> tuple[str, str]:
    """(body text, content type) of a run's request.

    A string payload is the raw body, sent as-is (``text/plain`` unless it parses as JSON or a
    content type is given); any other JSON value is sent as compact JSON. A string that nests
    deeper than the JSON limit raises TooDeep (400) before anything parses it: the request body's
    own check cannot see into strings, and a Switch would read this one as JSON.
    """
    if isinstance(payload, str):
        if nesting_exceeds(payload):
            raise TooDeep("The payload (a raw request body)", path="payload")
        if content_type:
            return payload, content_type
        try:
            json.loads(payload)
            return payload, "application/json"
        except ValueError:
            return payload, "text/plain; charset=utf-8"
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False), content_type or "application/json"
