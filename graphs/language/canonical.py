"""Canonical form and content hash of a manifest.

The canonical document is the whole document as written (every field, unknown ones included, nulls
included) with mapping keys sorted at every level. Two manifests that differ only in key order,
whitespace, comments, anchors or YAML-versus-JSON have the same canonical document and hash;
any difference in what the user wrote (a value, a type — ``80`` vs ``"80"`` vs ``80.0`` —, an
extra field) changes both.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .model import Manifest


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def canonical_document(manifest: Manifest) -> dict[str, Any]:
    """A new JSON-compatible dict: ``manifest.document`` with keys sorted, nothing dropped. Pure."""
    result: dict[str, Any] = _sorted(dict(manifest.document))
    return result


def canonical_json(manifest: Manifest) -> str:
    """The canonical document as compact JSON (sorted keys, no whitespace, UTF-8 text)."""
    return json.dumps(
        canonical_document(manifest),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def spec_hash(manifest: Manifest) -> str:
    """``"sha256:" + hex`` of the UTF-8 bytes of ``canonical_json(manifest)``. Stable across
    processes and Python versions (JSON, not ``hash()``)."""
    return "sha256:" + hashlib.sha256(canonical_json(manifest).encode("utf-8")).hexdigest()
