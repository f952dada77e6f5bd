"""What the graph store's views share: the ETag precondition of a save, the answers to a save
(``201``/``200``) and to a stale one (``409``), the request fields they parse with, and the KServe
release a request names."""

from __future__ import annotations

import re
from typing import Any

from rest_framework import serializers, status
from rest_framework.response import Response

from config.exceptions import BadRequest
from config.params import parse_db_int
from config.types import AuthedRequest as Request
from graphs import services
from graphs.errors import StaleVersion
from graphs.language.releases import Release, UnknownRelease, get_release, release_names
from graphs.serializers import VersionOutputSerializer

_IF_MATCH = re.compile(r'^\s*(?:W/)?"?v?([0-9]+)"?\s*$')


def etag(graph_version_number: int | None) -> str:
    return f'"v{graph_version_number or 0}"'


def base_version_from(request: Request, body_value: int | None) -> int | None:
    """The version a save was edited from: ``If-Match: "v{n}"`` or ``base_version`` in the body."""
    header = request.headers.get("If-Match")
    if header is None or header.strip() == "*":
        return body_value
    match = _IF_MATCH.match(header)
    number = parse_db_int(match.group(1)) if match is not None else None
    if number is None:
        raise BadRequest(f'If-Match must look like "v3" (the ETag of the graph), got {header[:80]!r}.')
    if body_value is not None and body_value != number:
        raise BadRequest(f"If-Match says version {number} but base_version says {body_value}.")
    return number


class ObjectField(serializers.JSONField):
    """A JSON object (dict); anything else is refused with a clear message."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError(f"Must be a JSON object, not {type(value).__name__}.")
        return value


def refuse_unknown(serializer: serializers.Serializer, message: str) -> None:
    """Raise a ValidationError naming every key of the body that is not one of ``serializer``'s fields."""
    data = serializer.initial_data
    unknown = sorted(set(data) - set(serializer.fields)) if isinstance(data, dict) else []
    if unknown:
        raise serializers.ValidationError({key: message for key in unknown})


class TruncatedCharField(serializers.CharField):
    """Text cut to ``max_chars`` characters rather than refused (a search box's query)."""

    def __init__(self, *, max_chars: int, **kwargs: Any) -> None:
        super().__init__(allow_blank=True, trim_whitespace=False, **kwargs)
        self.max_chars = max_chars

    def to_internal_value(self, data: Any) -> str:
        return str(super().to_internal_value(data))[: self.max_chars]


class FlagField(serializers.BooleanField):
    """A yes/no query parameter (true/false, 1/0, yes/no, on/off); empty (``?mine=``) means no."""

    def to_internal_value(self, data: Any) -> bool:
        return False if data == "" else bool(super().to_internal_value(data))


def text_param(default: str | None, help_text: str) -> serializers.CharField:
    """An optional text query parameter, taken as sent (blank allowed, spaces kept)."""
    return serializers.CharField(
        required=False, default=default, allow_blank=True, trim_whitespace=False, help_text=help_text
    )


def saved_response(result: services.SaveResult) -> Response:
    """201 with a new version, 200 with the identical latest one; its ETag is the next precondition."""
    response = Response(
        VersionOutputSerializer(result.version).data,
        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
    )
    response["ETag"] = etag(result.version.number)
    return response


def stale_response(stale: StaleVersion) -> Response:
    """409 for a save from an old base: the latest number, the latest version and the diff to it."""
    body = stale.body()
    body["latest"] = VersionOutputSerializer(stale.latest).data if stale.latest else None
    return Response(body, status=status.HTTP_409_CONFLICT)


def release_field() -> serializers.CharField:
    return serializers.CharField(
        required=False,
        max_length=16,
        help_text="A KServe release (" + ", ".join(release_names()) + "): check and write the manifest for "
        "its CRD (default: the newest)",
    )


def release_of(value: str | None) -> Release | None:
    if not value:
        return None
    try:
        return get_release(value)
    except UnknownRelease as exc:
        raise BadRequest(
            str(exc), issues=[{"severity": "error", "code": "release.unknown", "path": "kserve_version",
                               "message": str(exc)}]
        ) from None  # fmt: skip
