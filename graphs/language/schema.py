"""The CRD's structural schema (``openAPIV3Schema``) and a small walker that checks a document against it.

The schema is read once, at import time, from the copy of KServe's CRD shipped in ``data/`` (taken
unedited from kserve/kserve ``config/crd/full/serving.kserve.io_inferencegraphs.yaml``). The walker
covers what that schema uses: ``type`` (object, array, string, integer, boolean), ``enum``,
``required``, ``format`` int32/int64 ranges, ``pattern``, ``properties``/``additionalProperties``,
``items``, ``x-kubernetes-int-or-string`` and ``x-kubernetes-list-type: map`` keys. Messages follow
the Kubernetes API server's wording. As on the API server, ``null`` counts as absent, and fields the
schema does not declare are not errors (they are pruned): they come out as warnings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final

import yaml

from .issues import ERROR, WARNING, Severity, format_path
from .model import API_VERSION, PathKey

CRD_FILE: Final = "kserve-inferencegraph-crd.yaml"

# Go's int32/int64 bounds: the API server refuses integers outside the declared format.
_RANGES: Final = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _load_crd() -> Mapping[str, Any]:
    text = resources.files("graphs.language").joinpath("data", CRD_FILE).read_text(encoding="utf-8")
    crd = yaml.safe_load(text)
    version = API_VERSION.rsplit("/", 1)[1]
    for entry in crd["spec"]["versions"]:
        if entry["name"] == version:
            schema: Mapping[str, Any] = entry["schema"]["openAPIV3Schema"]
            return schema
    raise RuntimeError(f"{CRD_FILE} has no {version} version")  # pragma: no cover - shipped file


OPENAPI_SCHEMA: Final[Mapping[str, Any]] = _load_crd()
"""The CRD's ``openAPIV3Schema`` for v1alpha1 (treat as read-only)."""

SPEC_FIELDS: Final[tuple[str, ...]] = tuple(OPENAPI_SCHEMA["properties"]["spec"]["properties"])
"""The keys of ``spec`` in the CRD's order."""


def json_type(value: Any) -> str:
    """The JSON type name of a value, as the API server's messages say it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def is_integer(value: Any) -> bool:
    """Integer as the API server sees it: an int (not a bool) or a float with an integral value."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPE_CHECKS: Final[dict[str, Callable[[Any], bool]]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": is_integer,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


@dataclass(frozen=True, slots=True)
class Violation:
    """One schema finding at ``path``; ``validate`` turns it into an ``Issue`` with node, step and line."""

    code: str
    severity: Severity
    message: str
    path: PathKey


def _issue(code: str, message: str, path: PathKey, severity: Severity = ERROR) -> Violation:
    return Violation(code=code, severity=severity, message=message, path=path)


def check(document: Any, schema: Mapping[str, Any] = OPENAPI_SCHEMA) -> list[Violation]:
    """Every violation of ``schema`` in ``document`` (errors) and every undeclared field (warnings,
    code ``schema.unknown-field``), in document order."""
    out: list[Violation] = []
    _walk(document, schema, (), out)
    return out


class _Where:
    """A path rendered only when a message needs it (rendering every visited path costs more than
    the whole walk)."""

    __slots__ = ("path",)

    def __init__(self, path: PathKey) -> None:
        self.path = path

    def __format__(self, spec: str) -> str:
        return format(format_path(self.path) or "<root>", spec)


def _walk(value: Any, schema: Mapping[str, Any], path: PathKey, out: list[Violation]) -> None:
    if value is None:
        return
    where = _Where(path)
    if schema.get("x-kubernetes-int-or-string"):
        if not (is_integer(value) or isinstance(value, str)):
            out.append(_type_issue(value, "integer or string", path, where))
        else:
            _check_pattern(value, schema, path, where, out)
        return
    expected = schema.get("type")
    if expected is not None and not _TYPE_CHECKS[expected](value):
        out.append(_type_issue(value, expected, path, where))
        return
    _check_value(value, schema, path, where, out)
    if isinstance(value, dict):
        _walk_object(value, schema, path, where, out)
    elif isinstance(value, list):
        _walk_list(value, schema, path, out)


def _type_issue(value: Any, expected: str, path: PathKey, where: _Where) -> Violation:
    actual = json_type(value)
    return _issue(
        "schema.type",
        f'{where}: Invalid value: "{actual}": {where} in body must be of type {expected}: "{actual}"',
        path,
    )


def _null_issue(path: PathKey, schema: Mapping[str, Any]) -> Violation:
    """A list item or map value that is null (only struct fields may be)."""
    where = format_path(path)
    return _issue(
        "schema.type",
        f'{where}: Invalid value: "null": {where} in body must be of type {schema.get("type", "object")}',
        path,
    )


def _check_value(
    value: Any, schema: Mapping[str, Any], path: PathKey, where: _Where, out: list[Violation]
) -> None:
    """The constraints on a value of the right type: enum, integer format range, pattern."""
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        supported = ", ".join(json.dumps(item) for item in enum)
        out.append(
            _issue(
                "schema.enum",
                f"{where}: Unsupported value: {json.dumps(value, ensure_ascii=False)}: supported values: "
                f"{supported}",
                path,
            )
        )
    bounds = _RANGES.get(schema.get("format", ""))
    if bounds is not None and is_integer(value) and not bounds[0] <= value <= bounds[1]:
        out.append(
            _issue(
                "schema.format",
                f"{where}: Invalid value: {value}: {where} in body must be of type {schema['format']}",
                path,
            )
        )
    _check_pattern(value, schema, path, where, out)


def _check_pattern(
    value: Any, schema: Mapping[str, Any], path: PathKey, where: _Where, out: list[Violation]
) -> None:
    if isinstance(value, str) and "pattern" in schema and not _pattern(schema["pattern"]).search(value):
        out.append(
            _issue(
                "schema.pattern",
                f"{where}: Invalid value: {json.dumps(value)}: {where} in body should match "
                f"'{schema['pattern']}'",
                path,
            )
        )


def _walk_list(value: list[Any], schema: Mapping[str, Any], path: PathKey, out: list[Violation]) -> None:
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            if item is None:
                out.append(_null_issue((*path, index), items))
            else:
                _walk(item, items, (*path, index), out)
    if schema.get("x-kubernetes-list-type") == "map":
        _list_map_keys(value, schema.get("x-kubernetes-list-map-keys", []), path, out)


def _walk_object(
    value: dict[str, Any], schema: Mapping[str, Any], path: PathKey, where: _Where, out: list[Violation]
) -> None:
    for key in schema.get("required", ()):
        if value.get(key) is None:
            out.append(
                _issue("schema.required", f"{format_path((*path, key))}: Required value", (*path, key))
            )
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        sub_path = (*path, key)
        if properties is not None and key in properties:
            _walk(item, properties[key], sub_path, out)
        elif isinstance(extra, Mapping):
            if item is None:
                out.append(_null_issue(sub_path, extra))
            else:
                _walk(item, extra, sub_path, out)
        elif properties is not None:
            out.append(
                _issue(
                    "schema.unknown-field",
                    f'{where}: unknown field "{key}": it is not in the InferenceGraph schema, so '
                    "KServe's API server drops it (or rejects the manifest under strict field validation)",
                    sub_path,
                    WARNING,
                )
            )


def _list_map_keys(value: list[Any], keys: list[str], path: PathKey, out: list[Violation]) -> None:
    seen: set[str] = set()
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            continue
        identity = json.dumps({key: item.get(key) for key in keys}, sort_keys=True)
        if identity in seen:
            out.append(
                _issue(
                    "schema.duplicate",
                    f"{format_path((*path, index))}: Duplicate value: {identity}",
                    (*path, index),
                )
            )
        seen.add(identity)
