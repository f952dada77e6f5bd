"""One error shape for the whole API: ``{"detail": str, "issues": [...], ...}``.

Services raise :class:`ApplicationError` subclasses for expected failures; DRF's own exceptions
(validation, authentication, throttling, 404) are reshaped here. A database too busy to take a
write (SQLite's "database is locked" after its busy timeout, ``STUDIO_SQLITE_TIMEOUT``) is a
temporary condition: 503 with ``Retry-After``. Anything else is left alone and becomes a 500, so
that it gets noticed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import OperationalError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, resolve
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from config.nesting import too_deep_issue

# Seconds a client should wait after a 503 for a busy database: one import batch or a save
# commits in well under this.
BUSY_RETRY_AFTER = 2


class ApplicationError(Exception):
    """An expected failure with an HTTP status, a message and optional issues."""

    status_code: int = status.HTTP_400_BAD_REQUEST

    def __init__(
        self,
        detail: str,
        *,
        issues: Sequence[Mapping[str, Any]] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.issues = [dict(i) for i in issues]
        self.extra = dict(extra or {})

    def body(self) -> dict[str, Any]:
        data: dict[str, Any] = {"detail": self.detail}
        if self.issues:
            data["issues"] = self.issues
        data.update(self.extra)
        return data


class BadRequest(ApplicationError):
    status_code = status.HTTP_400_BAD_REQUEST


class TooDeep(BadRequest):
    """JSON text (or text that will be read as JSON) nests deeper than the limit (400)."""

    def __init__(self, where: str, *, path: str) -> None:
        issue = too_deep_issue(where, path)
        super().__init__(issue["message"], issues=[issue])


class Forbidden(ApplicationError):
    status_code = status.HTTP_403_FORBIDDEN


class NotFound(ApplicationError):
    status_code = status.HTTP_404_NOT_FOUND


class Conflict(ApplicationError):
    status_code = status.HTTP_409_CONFLICT


class PayloadTooLarge(ApplicationError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class Unprocessable(ApplicationError):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY


class TooManyRequests(ApplicationError):
    """A limit of what one user may have going at once (429); ``retry_after`` seconds go in the
    ``Retry-After`` header."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS

    def __init__(self, detail: str, *, retry_after: int, **kwargs: Any) -> None:
        super().__init__(detail, **kwargs)
        self.retry_after = retry_after


def is_database_busy(exc: BaseException) -> bool:
    """True for the OperationalError of a write lock that was not granted in time.

    SQLite says "database is locked" (or "… is busy"); PostgreSQL's lock_timeout says "canceling
    statement due to lock timeout".
    """
    if not isinstance(exc, OperationalError):
        return False
    text = str(exc).lower()
    return "database is locked" in text or "is busy" in text or "lock timeout" in text


def _busy_response() -> Response:
    message = "The database is busy with other writes; nothing was saved. Try again in a few seconds."
    set_rollback()
    return Response(
        {
            "detail": message,
            "issues": [{"code": "server.database-busy", "severity": "error", "message": message}],
        },
        status=status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": str(BUSY_RETRY_AFTER)},
    )


def _field_issues(errors: Any, path: str = "") -> list[dict[str, Any]]:
    """Flatten DRF's nested ``ValidationError.detail`` into issues with a dotted path."""
    if isinstance(errors, Mapping):
        out: list[dict[str, Any]] = []
        for key, value in errors.items():
            sub = str(key) if key != "non_field_errors" else ""
            out += _field_issues(value, f"{path}.{sub}".strip(".") if sub else path)
        return out
    if isinstance(errors, list) and errors and all(isinstance(e, str) for e in errors):
        return [
            {
                "code": f"request.{getattr(e, 'code', 'invalid')}",
                "severity": "error",
                "message": str(e),
                **({"path": path} if path else {}),
            }
            for e in errors
        ]
    if isinstance(errors, list):
        out = []
        for index, value in enumerate(errors):
            out += _field_issues(value, f"{path}[{index}]")
        return out
    return [
        {
            "code": f"request.{getattr(errors, 'code', 'invalid')}",
            "severity": "error",
            "message": str(errors),
            **({"path": path} if path else {}),
        }
    ]


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, TooManyRequests):
        return Response(exc.body(), status=exc.status_code, headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, ApplicationError):
        return Response(exc.body(), status=exc.status_code)
    if is_database_busy(exc):
        return _busy_response()
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        issues = _field_issues(exc.detail)
        response.data = {
            "detail": issues[0]["message"] if len(issues) == 1 else "Invalid input.",
            "issues": issues,
        }
    elif isinstance(exc, exceptions.ParseError):
        issues = getattr(exc, "issues", None) or [
            {"code": "request.parse-error", "severity": "error", "message": str(exc.detail)}
        ]
        response.data = {"detail": str(exc.detail), "issues": issues}
    elif isinstance(response.data, Mapping) and "detail" in response.data:
        response.data = {"detail": str(response.data["detail"])}
    return response


API_NOT_FOUND_URL_NAME = "api-not-found"


@csrf_exempt  # it changes nothing; a session's POST without its CSRF token still learns the path is wrong
def api_not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """The last route under ``/api/``: whatever no API route matched, with DEBUG on or off (Django
    shows its HTML debug page for a 404 with DEBUG on, and ``handler404`` only with it off).

    A path without its trailing slash whose slashed form is an API route keeps Django's
    ``APPEND_SLASH`` behaviour for reads (301 there; this route would otherwise take them first);
    any other method is told where to send it, as a redirect would lose the body.
    """
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.url_name != API_NOT_FOUND_URL_NAME:
            slashed = request.get_full_path(force_append_slash=True)
            if request.method in ("GET", "HEAD"):
                return HttpResponsePermanentRedirect(slashed)
            return JsonResponse(
                {
                    "detail": f"There is no API endpoint at {request.path!r}; did you mean {request.path + '/'!r}?"
                },
                status=404,
            )
    return JsonResponse({"detail": f"There is no API endpoint at {request.path!r}."}, status=404)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 404 for a URL no route matches: the API's error shape under ``/api/``, else the
    plain page (so a client of the API never has to parse HTML)."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": f"There is no API endpoint at {request.path!r}."}, status=404)
    return defaults.page_not_found(request, exception)
