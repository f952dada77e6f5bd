"""A result's value as Python (``Result.value()``), built with an explicit stack."""

from __future__ import annotations

import re
from typing import Any, Final

from execution.engine.goports.gjson.result import (
    _INT_RAW,
    FALSE,
    NULL,
    NUMBER,
    STRING,
    TRUE,
    Result,
    _parse_float0,
)
from execution.engine.goports.gjson.scan import _CONTAINER_START, _tostr

# --------------------------------------------------------------------------------------------
# Value as Python
# --------------------------------------------------------------------------------------------

_VALUE_TOKEN: Final = re.compile(
    rb'(")|([{\[])|([\]}])|(-?[0-9][^\x00- ,\]}]*|-[^\x00- ,\]}]*)|(t[a-z]*)|(f[a-z]*)|(n[a-z]*)',
)


def _py_number(raw: bytes) -> int | float:
    if raw and _INT_RAW.fullmatch(raw) and raw not in (b"-", b""):
        return int(raw)
    return _parse_float0(raw)


def _to_python(r: Result) -> Any:
    t = r.type
    if t == NULL:
        return None
    if t == FALSE:
        return False
    if t == TRUE:
        return True
    if t == NUMBER:
        return _py_number(r.raw)
    if t == STRING:
        return r.str.decode("utf-8", "replace")
    j = r.raw
    m = _CONTAINER_START.search(j)
    if m is None or j[: m.start()].strip(b" \t\r\n\v\f"):
        return None
    # Containers: (object?, container, pending key) on an explicit stack.
    root: Any = None
    stack: list[list[Any]] = []
    i = m.start()
    n = len(j)
    sentinel = object()
    while i < n:
        tok = _VALUE_TOKEN.search(j, i)
        if tok is None:
            break
        i = tok.end()
        value: Any = sentinel
        if tok.group(1):
            raw, s = _tostr(j[tok.start() :])
            i = tok.start() + len(raw)
            value = s.decode("utf-8", "replace")
        elif tok.group(2):
            container: Any = {} if tok.group(2) == b"{" else []
            if stack:
                _py_add(stack[-1], container)
            else:
                root = container
            stack.append([isinstance(container, dict), container, _PENDING])
            continue
        elif tok.group(3):
            stack.pop()
            if not stack:
                break
            continue
        elif tok.group(4):
            value = _py_number(tok.group(4))
        elif tok.group(5):
            value = True
        elif tok.group(6):
            value = False
        else:
            value = None
        if not stack:
            break
        _py_add(stack[-1], value)
    return root


def _py_add(frame: list[Any], value: Any) -> None:
    is_obj, container, key = frame
    if not is_obj:
        container.append(value)
        return
    if key is _PENDING:
        frame[2] = value if isinstance(value, str) else ""
        return
    if key not in container:
        container[key] = value
    frame[2] = _PENDING


_PENDING: Final = object()
