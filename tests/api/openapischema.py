"""Reading the OpenAPI schema's components with jsonschema (a helper of tests/api, not a test)."""

from __future__ import annotations

from typing import Any


def json_schema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable`` spelt as JSON Schema (which jsonschema understands)."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        if isinstance(out.get("type"), str) and "enum" not in out:
            out["type"] = [out["type"], "null"]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out
