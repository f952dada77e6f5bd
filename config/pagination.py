"""Paginated lists for APIViews: ``{"count", "next", "previous", "results"}`` and its schema."""

from __future__ import annotations

import functools
from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


def paginate(request: Request, view: APIView, queryset: Any, serializer_class: type) -> Response:
    """One page of ``queryset`` (``?page=``), serialized with ``serializer_class``."""
    paginator = PageNumberPagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


@functools.cache
def paginated(serializer_class: type) -> Any:
    """The OpenAPI shape of a page of ``serializer_class`` (for ``extend_schema(responses=...)``)."""
    name = serializer_class.__name__.removesuffix("Serializer")
    return inline_serializer(
        f"Paginated{name}List",
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
        },
    )
