"""Modifiers (``@reverse``, ``@flatten``, ``@join``, ``@dig``, …) and static values (``!true``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Final

from execution.engine.goports.gjson.flavour import is_legacy
from execution.engine.goports.gjson.pretty import _mod_pretty
from execution.engine.goports.gjson.result import (
    MAX_BUILT_BYTES,
    Result,
    TooMuchWork,
    _built,
    _charge,
    _Step,
    _trampoline,
)
from execution.engine.goports.gjson.scan import (
    _GO_SPACE,
    _QUOTE,
    _decode_rune,
    _for_each,
    _parse,
    _parse_squash,
    _squash,
    _string_end,
    _trim,
)
from execution.engine.goports.gjson.validate import _valid

_HEX: Final = b"0123456789abcdef"


def _append_json_string(s: bytes) -> bytes:
    """gjson ``AppendJSONString``: a JSON string literal, ``<>&`` escaped, bad UTF-8 as U+FFFD.

    Byte-level replaces run in C; only runs of non-ASCII bytes go through Python.
    """
    if len(s) + s.count(b"\\") + s.count(b'"') > MAX_BUILT_BYTES:
        # Refuse before building: each escape doubles a byte (repeated @tostr grows 2x a step).
        raise TooMuchWork(f"the path builds a value over {MAX_BUILT_BYTES} bytes")
    out = s.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    for special, escaped in _JS_ASCII_ESCAPES:
        if special in out:
            out = out.replace(special, escaped)
    if not out.isascii():
        out = _JS_HIGH_RUN.sub(_js_high_run, out)
    return b'"' + out + b'"'


_JS_ASCII_ESCAPES: Final = tuple(
    (bytes((c,)), {0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}.get(c, b"\\u%04x" % c))
    for c in [*range(0x20), 0x3C, 0x3E, 0x26]
)
_JS_HIGH_RUN: Final = re.compile(rb"[\x80-\xff]+")


def _js_high_run(m: re.Match[bytes]) -> bytes:
    run = m.group()
    try:
        text = run.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        if "\u2028" not in text and "\u2029" not in text:
            return run
    out = bytearray()
    i = 0
    n = len(run)
    while i < n:
        r, size = _decode_rune(run, i, n)
        if r == 0xFFFD and size == 1:
            out += b"\\ufffd"
        elif r in (0x2028, 0x2029):
            out += b"\\u202" + bytes((_HEX[r & 0xF],))
        else:
            out += run[i : i + size]
        i += size
    return bytes(out)


def _exec_static(path: bytes) -> tuple[bytes, bytes, bool]:
    name = path[1:]
    if name and name[0] in b'{["+-0123456789':
        _, res = _parse_squash(name, 0)
        return name[len(res) :], res, True
    path_out = b""
    for i in range(1, len(path)):
        if path[i] in b"|.":
            path_out = path[i:]
            name = path[1:i]
            break
    if name.lower() in (b"true", b"false", b"null", b"nan", b"inf"):
        return path_out, name, True
    return path_out, b"", False


def _args_end(s: bytes) -> int:
    """Where a modifier's plain-text argument ends: the first '|' outside brackets and strings.

    Checked against Go gjson v1.18.0: any of ``([{`` opens and any of ``)]}`` closes (a closer
    with nothing open is ignored), strings honour backslash escapes; with no such '|' the
    argument runs to the end of the path.
    """
    depth = 0
    n = len(s)
    i = 0
    while i < n:
        c = s[i]
        if c == 0x7C and depth == 0:
            return i
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            if depth > 0:
                depth -= 1
        elif c == _QUOTE:
            q, _ = _string_end(s, i + 1)
            if q < 0:
                return n
            i = q
        i += 1
    return n


def _first_pipe(s: bytes) -> int:
    """gjson v1.14.4: a modifier's plain argument ends at the first '|', wherever it is."""
    idx = s.find(b"|")
    return len(s) if idx < 0 else idx


def _exec_modifier(j: bytes, path: bytes, d: int) -> tuple[bytes, bytes, bool]:
    name = path[1:]
    path_out = b""
    has_args = False
    for i in range(1, len(path)):
        c = path[i]
        if c == 0x3A:
            path_out = path[i + 1 :]
            name = path[1:i]
            has_args = len(path_out) > 0
            break
        if c == 0x7C or c == 0x2E:
            path_out = path[i:]
            name = path[1:i]
            break
    fn = _MODIFIERS.get(name) if not (name == b"dig" and is_legacy()) else None
    if fn is None:
        return path_out, b"", False
    args = b""
    if has_args:
        parsed = False
        if path_out[0] in b'{["' and _parse(path_out).exists:
            args = _squash(path_out)
            path_out = path_out[len(args) :]
            parsed = True
        if not parsed:
            idx = _args_end(path_out) if not is_legacy() else _first_pipe(path_out)
            args, path_out = path_out[:idx], path_out[idx:]
    return path_out, _built(fn(j, args, d)), True


# --------------------------------------------------------------------------------------------
# ForEach, trampoline, modifiers
# --------------------------------------------------------------------------------------------


def _mod_this(j: bytes, arg: bytes, d: int) -> bytes:
    return j


def _mod_valid(j: bytes, arg: bytes, d: int) -> bytes:
    return j if _valid(j) else b""


def _mod_ugly(j: bytes, arg: bytes, d: int) -> bytes:
    return _ugly(j)


_UGLY_TOKEN: Final = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*"?)|[\x00- ]+', re.DOTALL)


def _ugly(j: bytes) -> bytes:
    return _UGLY_TOKEN.sub(lambda m: m.group(1) or b"", j)


def _mod_reverse(j: bytes, arg: bytes, d: int) -> bytes:
    res = _parse(j)
    if res.is_array():
        values = [v.raw for _, v in _for_each(res)]
        return b"[" + b",".join(reversed(values)) + b"]"
    if res.is_object():
        pairs = [k.raw + b":" + v.raw for k, v in _for_each(res)]
        return b"{" + b",".join(reversed(pairs)) + b"}"
    return j


def _unwrap(j: bytes) -> bytes:
    j = _trim(j)
    if len(j) >= 2 and j[0] in b"[{":
        j = j[1:-1]
    return j


def _mod_flatten(j: bytes, arg: bytes, d: int) -> bytes:
    deep = False
    if arg:
        for k, v in _for_each(_parse(arg)):
            if k.string() == b"deep":
                deep = v.as_bool()
    out: bytes = _trampoline(_flatten_step(j, deep))
    return out


def _flatten_step(j: bytes, deep: bool) -> _Step:
    _charge(len(j))
    res = _parse(j)
    if not res.is_array():
        return j
    out = bytearray(b"[")
    idx = 0
    for _, value in _for_each(res):
        if value.is_array():
            if deep:
                inner = yield (_flatten_step, (value.raw, deep))
                raw = _unwrap(inner)
            else:
                raw = _unwrap(value.raw)
        else:
            raw = value.raw
        raw = raw.strip(_GO_SPACE)
        if raw:
            if idx > 0:
                out.append(0x2C)
            out += raw
            idx += 1
    out.append(0x5D)
    return bytes(out)


def _mod_join(j: bytes, arg: bytes, d: int) -> bytes:
    res = _parse(j)
    if not res.is_array():
        return j
    preserve = False
    if arg:
        for k, v in _for_each(_parse(arg)):
            if k.string() == b"preserve":
                preserve = v.as_bool()
    out = bytearray(b"{")
    if preserve:
        idx = 0
        for _, value in _for_each(res):
            if not value.is_object():
                continue
            if idx > 0:
                out.append(0x2C)
            out += _unwrap(value.raw)
            idx += 1
    else:
        keys: list[Result] = []
        kvals: dict[bytes, Result] = {}
        for _, value in _for_each(res):
            if not value.is_object():
                continue
            for key, val in _for_each(value):
                kstr = key.string()
                if kstr not in kvals:
                    keys.append(key)
                kvals[kstr] = val
        for n, key in enumerate(keys):
            if n > 0:
                out.append(0x2C)
            out += key.raw + b":" + kvals[key.string()].raw
    out.append(0x7D)
    return bytes(out)


def _mod_keys(j: bytes, arg: bytes, d: int) -> bytes:
    v = _parse(j)
    if not v.exists:
        return b"[]"
    obj = v.is_object()
    return b"[" + b",".join(k.raw if obj else b"null" for k, _ in _for_each(v)) + b"]"


def _mod_values(j: bytes, arg: bytes, d: int) -> bytes:
    v = _parse(j)
    if not v.exists:
        return b"[]"
    if v.is_array():
        return j
    return b"[" + b",".join(val.raw for _, val in _for_each(v)) + b"]"


def _mod_tostr(j: bytes, arg: bytes, d: int) -> bytes:
    return _append_json_string(j)


def _mod_fromstr(j: bytes, arg: bytes, d: int) -> bytes:
    if not _valid(j):
        return b""
    return _parse(j).string()


def _mod_group(j: bytes, arg: bytes, d: int) -> bytes:
    res = _parse(j)
    if not res.is_object():
        return b""
    groups: list[bytearray] = []
    for key, value in _for_each(res):
        if not value.is_array():
            continue
        for idx, (_, item) in enumerate(_for_each(value)):
            if idx == len(groups):
                groups.append(bytearray())
            groups[idx] += b"," + key.raw + b":" + item.raw
    return b"[" + b",".join(b"{" + bytes(g[1:]) + b"}" for g in groups) + b"]"


def _mod_dig(j: bytes, arg: bytes, d: int) -> bytes:
    from execution.engine.goports.gjson.walk import _get  # the walk runs the modifiers: import it late

    found: list[bytes] = []
    # Pre-order walk with an explicit stack of child iterators (gjson recurses per level).
    root = _parse(j)
    res = _get(root.raw, arg, d)
    if res.exists:
        found.append(res.raw)
    stack: list[Iterator[tuple[Result, Result]]] = []
    if root.is_array() or root.is_object():
        stack.append(_for_each(root))
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            continue
        child = nxt[1]
        _charge(len(child.raw))
        res = _get(child.raw, arg, d)
        if res.exists:
            found.append(res.raw)
        if child.is_array() or child.is_object():
            stack.append(_for_each(child))
    return b"[" + b",".join(found) + b"]"


_MODIFIERS: Final[dict[bytes, Callable[[bytes, bytes, int], bytes]]] = {
    b"pretty": _mod_pretty,
    b"ugly": _mod_ugly,
    b"reverse": _mod_reverse,
    b"this": _mod_this,
    b"flatten": _mod_flatten,
    b"join": _mod_join,
    b"valid": _mod_valid,
    b"keys": _mod_keys,
    b"values": _mod_values,
    b"tostr": _mod_tostr,
    b"fromstr": _mod_fromstr,
    b"group": _mod_group,
    b"dig": _mod_dig,
}
