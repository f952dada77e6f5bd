"""Refuse oversized API request bodies up front with 413 and the limit, before anything reads them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


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
                f"Request body of {length} bytes is over the limit of {limit} bytes ({limit // 1024} KiB)."
            )
            return JsonResponse(
                {
                    "detail": detail,
                    "issues": [{"code": "request.too-large", "severity": "error", "message": detail}],
                },
                status=413,
            )
        return self.get_response(request)
