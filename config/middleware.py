"""Refuse what no view should see, up front: oversized request bodies (413 with the limit and the
setting that raises it), and
text no database can take in the URL, the query string or a header (400 saying where)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from graphs.language.storable import unstorable


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit is not None and length > limit:
            detail = (
                f"Request body of {length} bytes is over the limit of {limit} bytes ({limit // 1024} KiB), "
                "set by STUDIO_MAX_REQUEST_BYTES."
            )
            return JsonResponse(
                {
                    "detail": detail,
                    "issues": [{"code": "request.too-large", "severity": "error", "message": detail}],
                },
                status=413,
            )
        return self.get_response(request)


class UnstorableRequestMiddleware:
    """400 for a NUL (or a lone surrogate) in the path, a query parameter or a header value.

    PostgreSQL refuses such text even as a query parameter, so a lookup by graph name, token or
    session key would fail with a 500 wherever it happens; refusing it here, before the session
    and authentication read anything, closes every such way in at once.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = _unstorable_part(request)
        if where is None:
            return self.get_response(request)
        part, problem = where
        message = f"The {part.replace('.', ' ', 1)} holds {problem}."
        return JsonResponse(
            {
                "detail": message,
                "issues": [
                    {"code": "request.unstorable-text", "severity": "error", "message": message, "path": part}
                ],
            },
            status=400,
        )


def _unstorable_part(request: HttpRequest) -> tuple[str, str] | None:
    """Where the request holds unstorable text (``url``, ``query.<name>``, ``header.<Name>``)."""
    problem = unstorable(request.path)
    if problem is not None:
        return "url", problem
    for name, values in request.GET.lists():
        problem = unstorable(name)
        if problem is not None:
            return "query", problem
        for value in values:
            problem = unstorable(value)
            if problem is not None:
                return f"query.{name}", problem
    for key, value in request.META.items():
        if key.startswith("HTTP_") and isinstance(value, str):
            problem = unstorable(value)
            if problem is not None:
                return "header." + "-".join(p.capitalize() for p in key[5:].split("_")), problem
    return None
