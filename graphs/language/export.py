"""Export for deployment: the manifest as KServe takes it, in the order people write it.

``to_kserve_document`` keeps only what the CRD declares (unknown fields, ``status`` and server-set
metadata are dropped here, never in the stored document), omits what Go's ``omitempty`` would omit,
and orders keys: apiVersion, kind, metadata (name, namespace, labels, annotations), spec (nodes
first, then the other spec fields in the CRD's order); a node as routerType, steps; a step as name,
its target, condition, data, weight, dependency, mapPredictionsToInstances. Keys inside Kubernetes
sub-objects (resources, affinity, tolerations) keep the order they were written in.

omitempty as in KServe's Go types (docs/router-semantics.md, "Empty values: what an export leaves out"): empty strings, empty maps and lists,
``false`` ``mapPredictionsToInstances`` and ``maxReplicas: 0`` (a plain int32) are omitted; zero
values of pointer fields are kept (``weight``, ``timeout``, ``minReplicas``, ``scaleTarget``, the
router timeouts, ``tolerationSeconds``: ``0`` means something there). Map values and list items are
never omitted (an empty step ``{}`` keeps the indices of those after it; a node ``root: {}`` stays).
Integral floats (``80.0``) in integer fields are written as integers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

import yaml

from .model import API_VERSION, KIND, Manifest, PathKey
from .releases import Release
from .schema import OPENAPI_SCHEMA, SPEC_FIELDS, is_integer

_METADATA_ORDER: Final = ("name", "namespace", "labels", "annotations")
_NODE_ORDER: Final = ("routerType", "steps")
_STEP_ORDER: Final = (
    "name",
    "nodeName",
    "serviceName",
    "serviceUrl",
    "condition",
    "data",
    "weight",
    "dependency",
    "mapPredictionsToInstances",
)
_SPEC_ORDER: Final = ("nodes", *(key for key in SPEC_FIELDS if key != "nodes"))

# Struct fields whose Go zero value omitempty drops although it is not "empty" in JSON terms.
_OMIT_ZERO: Final[dict[PathKey, int]] = {("spec", "maxReplicas"): 0}
_OMIT_FALSE: Final = frozenset({"mapPredictionsToInstances"})

_OMIT: Final = object()


def _order_for(path: PathKey) -> tuple[str, ...] | None:
    if path == ("spec",):
        return _SPEC_ORDER
    if len(path) == 3 and path[:2] == ("spec", "nodes"):
        return _NODE_ORDER
    if len(path) == 5 and path[:2] == ("spec", "nodes") and path[3] == "steps":
        return _STEP_ORDER
    return None


def _prune(value: Any, schema: Mapping[str, Any] | None, path: PathKey, *, field: bool) -> Any:
    """The value filtered by ``schema``; ``_OMIT`` when omitempty drops it (only for struct fields)."""
    if value is None:
        return _OMIT
    if schema is None:
        return value
    if isinstance(value, dict):
        out = _prune_object(value, schema, path)
        return _OMIT if field and not out else out
    if isinstance(value, list):
        items = schema.get("items")
        item_schema = items if isinstance(items, Mapping) else None
        result = [
            _kept(item, _prune(item, item_schema, (*path, index), field=False))
            for index, item in enumerate(value)
        ]
        return _OMIT if field and not result else result
    if field and _omitted_scalar(value, path):
        return _OMIT
    if schema.get("type") == "integer" and isinstance(value, float) and is_integer(value):
        return int(value)
    return value


def _kept(original: Any, pruned: Any) -> Any:
    """A map value or list item is never omitted: what omitempty would drop stays as written."""
    return original if pruned is _OMIT else pruned


def _prune_object(value: dict[str, Any], schema: Mapping[str, Any], path: PathKey) -> dict[str, Any]:
    """A struct keeps its declared fields (in the order people write them), a map every entry, a
    free-form object (x-kubernetes-preserve-unknown-fields style) everything."""
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if isinstance(properties, Mapping):
        order = _order_for(path)
        keys = [key for key in order if key in value] if order else []
        keys += [key for key in value if key not in keys]
        out: dict[str, Any] = {}
        for key in keys:
            if key not in properties:
                continue  # not in the CRD: the API server would prune it
            pruned = _prune(value[key], properties[key], (*path, key), field=True)
            if pruned is not _OMIT:
                out[key] = pruned
        return out
    if isinstance(extra, Mapping):
        return {
            key: _kept(item, _prune(item, extra, (*path, key), field=False)) for key, item in value.items()
        }
    return dict(value)


def _omitted_scalar(value: Any, path: PathKey) -> bool:
    """Whether Go's omitempty drops this scalar struct field: an empty string, a ``false`` bool or
    an int32 zero of the fields that are not pointers."""
    if value == "" and isinstance(value, str):
        return True
    if value is False and path[-1] in _OMIT_FALSE:
        return True
    zero = _OMIT_ZERO.get(path)
    return zero is not None and value == zero and not isinstance(value, bool)


def to_kserve_document(manifest: Manifest, release: Release | None = None) -> dict[str, Any]:
    """A new JSON-compatible dict, ready for ``kubectl apply`` (see the module docstring). Pure.

    With ``release``, the fields that release's CRD does not have are left out, as its API server
    would drop them (validation reports each as an error naming the release).
    """
    document = manifest.document
    out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND}
    metadata_raw = document.get("metadata")
    metadata: dict[str, Any] = {}
    if isinstance(metadata_raw, dict):
        string_map: Mapping[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}
        for key in _METADATA_ORDER:
            schema: Mapping[str, Any] = string_map if key in ("labels", "annotations") else {"type": "string"}
            pruned = _prune(metadata_raw.get(key), schema, ("metadata", key), field=True)
            if pruned is not _OMIT:
                metadata[key] = pruned
    out["metadata"] = metadata
    spec = _prune(document.get("spec"), OPENAPI_SCHEMA["properties"]["spec"], ("spec",), field=False)
    out["spec"] = spec if isinstance(spec, dict) else {}
    if release is not None:
        _drop_unknown_to(release, out["spec"])
    return out


def _drop_unknown_to(release: Release, spec: dict[str, Any]) -> None:
    for key in [k for k in spec if k not in release.spec_fields]:
        del spec[key]
    nodes = spec.get("nodes")
    for node in nodes.values() if isinstance(nodes, dict) else ():
        for step in node.get("steps") or [] if isinstance(node, dict) else ():
            for key in [k for k in step if k not in release.step_fields] if isinstance(step, dict) else ():
                del step[key]


def normalize_for_export(manifest: Manifest) -> dict[str, Any]:
    """What a round trip through ``export_yaml`` keeps, with keys sorted: compare it with
    ``canonical_document(parse(export_yaml(manifest)))``."""
    return json.loads(json.dumps(to_kserve_document(manifest), sort_keys=True))  # type: ignore[no-any-return]


# --------------------------------------------------------------------------------------------------
# YAML writer
#
# The exported document is a tree of dicts, lists and JSON scalars, written in block style. A small
# writer does this directly: PyYAML's representer/serializer path costs several Python calls per
# value (about 10x slower on 500-node graphs). What it must get right is quoting, and there it defers
# to PyYAML's own resolver: a string is written plain only when it is simple and PyYAML reads it back
# as that same string; otherwise single-quoted, or double-quoted (JSON escapes are valid YAML) when it
# holds characters single quotes cannot carry. Multi-line strings become literal blocks when that is
# exact. Tests read every export back with ``yaml.safe_load`` (and property tests with arbitrary text).

_RESOLVER: Final = yaml.resolver.Resolver()
_STR_TAG: Final = "tag:yaml.org,2002:str"
# Plain scalars: no indicator first, no ": " or " #", no trailing ":" or space, no control or
# YAML line-break characters; flow indicators are fine in block context but not first.
_PLAIN: Final = re.compile(r"^[^\s\-?:,\[\]{}#&*!|>'\"%@`](?:[^:#\t\n\r\x85\u2028\u2029]|:(?! )|(?<! )#)*$")
_SINGLE_OK: Final = re.compile(
    r"^[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*$"
)
_LITERAL_LINE: Final = _SINGLE_OK
_UNSAFE: Final = re.compile(
    r"[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


@cache
def _plain_ok(text: str) -> bool:
    if (
        not _PLAIN.fullmatch(text)
        or not _SINGLE_OK.fullmatch(text)
        or text.endswith((" ", ":"))
        or text.startswith(("---", "..."))
    ):
        return False
    tag: str = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag == _STR_TAG


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        if _plain_ok(value):
            return value
        if _SINGLE_OK.fullmatch(value):
            return "'" + value.replace("'", "''") + "'"
        # JSON's escapes are YAML's; what JSON leaves raw but YAML cannot carry (DEL, C1 controls,
        # U+2028/2029, BOM) becomes \\uXXXX (never surrogate pairs, which PyYAML misreads).
        return _UNSAFE.sub(_escape, json.dumps(value, ensure_ascii=False))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # YAML 1.1 floats need a dot: 1e+20 would read back as a string.
        text = repr(value)
        return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text
    raise TypeError(f"not a JSON value: {type(value).__name__}")  # pragma: no cover - JSON only


def _literal(value: str, indent: str) -> str | None:
    """``|`` block for a multi-line string, or None when a block cannot hold it exactly."""
    body = value.rstrip("\n")
    trailing = len(value) - len(body)
    lines = body.split("\n")
    if (
        not body
        or lines[0].startswith(" ")
        or any(line != line.rstrip(" ") or not _LITERAL_LINE.fullmatch(line) for line in lines)
    ):
        return None
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    extra = "\n" * (trailing - 1) if trailing > 1 else ""
    text = "\n".join(f"{indent}{line}" if line else "" for line in lines)
    return f"|{chomp}\n{text}\n{extra}"


def _write(value: Any, indent: str, out: list[str]) -> None:
    """Append the block-style YAML lines of a non-empty dict or list at ``indent``."""
    if isinstance(value, dict):
        for key, item in value.items():
            key_text = _scalar(key)
            _write_entry(f"{indent}{key_text}:", item, indent, out, nested_indent=indent + "  ")
    else:
        for item in value:
            if isinstance(item, dict) and item:
                inner: list[str] = []
                _write(item, indent + "  ", inner)
                first = inner[0]
                inner[0] = f"{indent}- {first[len(indent) + 2 :]}"
                out.extend(inner)
            elif isinstance(item, list) and item:
                inner = []
                _write(item, indent + "  ", inner)
                inner[0] = f"{indent}- {inner[0][len(indent) + 2 :]}"
                out.extend(inner)
            else:
                _write_entry(f"{indent}-", item, indent, out, nested_indent=indent + "  ")


def _write_entry(head: str, item: Any, indent: str, out: list[str], nested_indent: str) -> None:
    if isinstance(item, dict):
        if item:
            out.append(head)
            _write(item, nested_indent, out)
        else:
            out.append(head + " {}")
    elif isinstance(item, list):
        if item:
            out.append(head)
            # Lists under a key are not indented (kubectl's and PyYAML's style).
            _write(item, indent if not head.endswith("-") else nested_indent, out)
        else:
            out.append(head + " []")
    elif isinstance(item, str) and "\n" in item and (block := _literal(item, nested_indent)) is not None:
        text = block.rstrip("\n")
        out.append(f"{head} {text}")
        # A "|+" block keeps its trailing line breaks as empty lines after the text.
        out.extend([""] * (len(block) - len(text) - 1))
    else:
        out.append(f"{head} {_scalar(item)}")


def export_yaml(manifest: Manifest, *, header: str | None = None, release: Release | None = None) -> str:
    """``to_kserve_document`` as block-style YAML (no aliases, unicode kept, keys in export order),
    preceded by ``header`` as ``# `` comment lines when given. Always ends with a newline."""
    lines: list[str] = []
    _write(to_kserve_document(manifest, release), "", lines)
    body = "\n".join(lines) + "\n"
    if not header:
        return body
    comments = [f"# {line}".rstrip() for line in header.splitlines()]
    return "\n".join(comments) + "\n" + body


def export_json(manifest: Manifest, *, release: Release | None = None) -> str:
    """``to_kserve_document`` as JSON indented by 2, unicode kept, ending with a newline."""
    return json.dumps(to_kserve_document(manifest, release), indent=2, ensure_ascii=False) + "\n"
