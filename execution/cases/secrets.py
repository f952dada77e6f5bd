"""Secret request headers of test cases: stored, shown and exported redacted, as runs store theirs.

A case outlives any run and may run in any environment, so it never holds a secret value (a run
keeps its secrets in Redis for an hour, for its worker; a case has no such moment). A header is
secret when runs would treat it so (every name but the harmless ones,
``run_request.SAFE_HEADERS``), or when any environment marks its name secret
(``Environment.secret_headers``): the case may be run there. The names are read again whenever a
case is shown or exported, so a name marked secret after a case was saved is not shown in clear
either. A redacted header is left out of the case's runs (as a run leaves out the secrets it no
longer has), never sent as ``***``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from execution.models import Environment
from execution.services import run_request


def secret_header_names() -> frozenset[str]:
    """The lower-case header names some environment marks secret (one query)."""
    names: set[str] = set()
    for listed in Environment.objects.values_list("secret_headers", flat=True):
        names.update(str(name).lower() for name in listed or ())
    return frozenset(names)


def redacted_document(document: Mapping[str, Any], also_secret: Collection[str]) -> dict[str, Any]:
    """The case document with secret header values redacted (``Bearer ***``), as runs store them."""
    out = dict(document)
    request = out.get("request")
    headers = request.get("headers") if isinstance(request, Mapping) else None
    if isinstance(request, Mapping) and isinstance(headers, Mapping) and headers:
        stored, _ = run_request.split_secret_headers(
            {str(k): str(v) for k, v in headers.items()}, also_secret
        )
        out["request"] = {**request, "headers": stored}
    return out


def is_redacted(name: str, value: str, also_secret: Collection[str]) -> bool:
    """Whether a stored header holds a redacted value rather than one to send."""
    return run_request.is_secret_header(name, also_secret) and value.endswith(run_request.REDACTED)
