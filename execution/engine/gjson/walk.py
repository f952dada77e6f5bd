"""The walk: gjson's ``parseObject``, ``parseArray`` and ``Get`` (multipaths, modifiers, pipes)."""

from __future__ import annotations

from execution.engine.gjson.match import _match_limit
from execution.engine.gjson.modifiers import _exec_modifier, _exec_static
from execution.engine.gjson.paths import (
    _is_simple_name,
    _name_of_last,
    _parse_array_path,
    _parse_object_path,
    _parse_sub_selectors,
    _split_possible_pipe,
)
from execution.engine.gjson.query import _query_matches
from execution.engine.gjson.result import (
    FALSE,
    JSON,
    MAX_PATH_NESTING,
    NULL,
    NUMBER,
    STRING,
    TRUE,
    PathTooComplex,
    Result,
    _built,
    _parse_float0,
    _parse_uint,
)
from execution.engine.gjson.scan import (
    _ARRAY_VALUE_START,
    _CONTAINER_START,
    _KEY_OR_CLOSE,
    _QUOTE,
    _VALUE_START,
    _append_json_string,
    _parse,
    _parse_any,
    _parse_literal,
    _parse_number,
    _parse_squash,
    _parse_string,
    _string_end,
    _unescape,
)
from execution.engine.gjson.validate import _valid


class _Ctx:
    __slots__ = ("calcd", "json", "pipe", "piped", "value")

    def __init__(self, j: bytes) -> None:
        self.json = j
        self.value = Result()
        self.pipe = b""
        self.piped = False
        self.calcd = False


# --------------------------------------------------------------------------------------------
# The walk: gjson's parseObject / parseArray / Get
# --------------------------------------------------------------------------------------------


def _nest(d: int) -> int:
    d += 1
    if d > MAX_PATH_NESTING:
        raise PathTooComplex(f"the path nests deeper than {MAX_PATH_NESTING} levels")
    return d


def _parse_object(c: _Ctx, i: int, path: bytes, d: int) -> tuple[int, bool]:
    d = _nest(d)
    rp = _parse_object_path(path)
    if not rp.more and rp.piped:
        c.pipe, c.piped = rp.pipe, True
    j = c.json
    n = len(j)
    key = b""
    kesc = False
    ok = False
    part = rp.part
    while i < n:
        m = _KEY_OR_CLOSE.search(j, i)
        if m is None:
            i = n
        else:
            i = m.start()
            if j[i] == 0x7D:  # '}'
                return i + 1, False
            s = i + 1
            q, kesc = _string_end(j, s)
            if q < 0:
                key, kesc, ok = j[s:], False, False
                i = n
            else:
                key, ok = j[s:q], True
                i = q + 1
        if not ok:
            return i, False
        if rp.wild:
            pmatch = _match_limit(_unescape(key) if kesc else key, part)
        else:
            pmatch = part == (_unescape(key) if kesc else key)
        hit = pmatch and not rp.more
        m = _VALUE_START.search(j, i)
        if m is None:
            i = n
            continue
        i = m.start()
        ch = j[i]
        num = False
        if ch == _QUOTE:
            i, val, vesc, ok = _parse_string(j, i + 1)
            if not ok:
                return i, False
            if hit:
                inner = val[1:-1]
                c.value = Result(STRING, val, _unescape(inner) if vesc else inner)
                return i, True
        elif ch == 0x7B or ch == 0x5B:
            if pmatch and not hit:
                if ch == 0x7B:
                    i, hit = _parse_object(c, i + 1, rp.path, d)
                else:
                    i, hit = _parse_array(c, i + 1, rp.path, d)
                if hit:
                    return i, True
            else:
                i, val = _parse_squash(j, i)
                if hit:
                    c.value = Result(JSON, val)
                    return i, True
        elif ch == 0x6E and i + 1 < n and j[i + 1] != 0x75:
            num = True
        elif ch in b"tfn":
            i, val = _parse_literal(j, i)
            if hit:
                c.value = Result(TRUE if ch == 0x74 else FALSE if ch == 0x66 else NULL, val)
                return i, True
        else:
            num = True
        if num:
            i, val = _parse_number(j, i)
            if hit:
                c.value = Result(NUMBER, val, b"", _parse_float0(val))
                return i, True
    return i, False


def _parse_array(c: _Ctx, i: int, path: bytes, d: int) -> tuple[int, bool]:
    d = _nest(d)
    rp = _parse_array_path(path)
    partidx = -1
    if not rp.arrch:
        u = _parse_uint(rp.part)
        partidx = -1 if u is None else u
    if not rp.more and rp.piped:
        c.pipe, c.piped = rp.pipe, True
    j = c.json
    n = len(j)
    h = 0
    alog: list[int] = []
    multires: bytearray | None = None
    pmatch = False
    hit = False

    def proc_query(qval: Result) -> bool:
        nonlocal multires
        if rp.q_all and multires is None:
            multires = bytearray(b"[")
        if qval.type == JSON:
            res = _get(qval.raw, rp.q_path, d)
        else:
            if rp.q_path != b"":
                return False
            res = qval
        if _query_matches(rp, res):
            if rp.more:
                left, right, ok = _split_possible_pipe(rp.path)
                if ok:
                    rp.path = left
                    c.pipe, c.piped = right, True
                res = _get(qval.raw, rp.path, d)
            else:
                res = qval
            if rp.q_all:
                raw = res.raw or res.string()
                if raw:
                    assert multires is not None
                    if len(multires) > 1:
                        multires.append(0x2C)
                    multires += raw
            else:
                c.value = res
                return True
        return False

    while i < n + 1:
        if not rp.arrch:
            pmatch = partidx == h
            hit = pmatch and not rp.more
        h += 1
        if rp.alogok:
            alog.append(i)
        if i >= n:
            ch = 0x5D
        else:
            m = _ARRAY_VALUE_START.search(j, i)
            if m is None:
                i = n
                ch = 0x5D
            else:
                i = m.start()
                ch = j[i]
        num = False
        if ch == _QUOTE:
            i, val, vesc, ok = _parse_string(j, i + 1)
            if not ok:
                return i, False
            if rp.q_on:
                inner = val[1:-1]
                if proc_query(Result(STRING, val, _unescape(inner) if vesc else inner)):
                    return i, True
            elif hit and not rp.alogok:
                inner = val[1:-1]
                c.value = Result(STRING, val, _unescape(inner) if vesc else inner)
                return i, True
        elif ch == 0x7B or ch == 0x5B:
            if pmatch and not hit:
                if ch == 0x7B:
                    i, hit = _parse_object(c, i + 1, rp.path, d)
                else:
                    i, hit = _parse_array(c, i + 1, rp.path, d)
                if hit and not rp.alogok:
                    return i, True
            else:
                i, val = _parse_squash(j, i)
                if rp.q_on:
                    if proc_query(Result(JSON, val)):
                        return i, True
                elif hit and not rp.alogok:
                    c.value = Result(JSON, val)
                    return i, True
        elif ch == 0x6E and i + 1 < n and j[i + 1] != 0x75:
            num = True
        elif ch in b"tfn":
            i, val = _parse_literal(j, i)
            qtype = TRUE if ch == 0x74 else FALSE if ch == 0x66 else NULL
            if rp.q_on:
                if proc_query(Result(qtype, val)):
                    return i, True
            elif hit and not rp.alogok:
                c.value = Result(qtype, val)
                return i, True
        elif ch == 0x5D:
            if rp.arrch and rp.part == b"#":
                if rp.alogok:
                    left, right, ok = _split_possible_pipe(rp.alogkey)
                    if ok:
                        rp.alogkey = left
                        c.pipe, c.piped = right, True
                    out = bytearray(b"[")
                    k = 0
                    for idx in alog:
                        while idx < n and j[idx] in b" \t\r\n":
                            idx += 1
                        if idx < n and j[idx] != 0x5D:
                            _, res, ok = _parse_any(j, idx, True)
                            if ok:
                                res = _get(res.raw, rp.alogkey, d)
                                if res.exists:
                                    if k > 0:
                                        out.append(0x2C)
                                    out += res.raw or res.string()
                                    k += 1
                    out.append(0x5D)
                    c.value = Result(JSON, _built(bytes(out)))
                    return i + 1, True
                c.value = Result(NUMBER, str(h - 1).encode(), b"", float(h - 1))
                c.calcd = True
                return i + 1, True
            if not c.value.exists:
                if multires:
                    c.value = Result(JSON, _built(bytes(multires) + b"]"))
                elif rp.q_all:
                    c.value = Result(JSON, b"[]")
            return i + 1, False
        else:
            num = True
        if num:
            i, val = _parse_number(j, i)
            if rp.q_on:
                if proc_query(Result(NUMBER, val, b"", _parse_float0(val))):
                    return i, True
            elif hit and not rp.alogok:
                c.value = Result(NUMBER, val, b"", _parse_float0(val))
                return i, True
    return i, False


def _get(j: bytes, path: bytes, d: int) -> Result:
    d = _nest(d)
    if len(path) > 1:
        c0 = path[0]
        if c0 == 0x40 or c0 == 0x21:  # '@' or '!'
            if c0 == 0x40:
                npath, rjson, ok = _exec_modifier(j, path, d)
            else:
                npath, rjson, ok = _exec_static(path)
            if ok:
                if npath[:1] in (b"|", b"."):
                    return _get(rjson, npath[1:], d)
                return _parse(rjson)
        if c0 == 0x5B or c0 == 0x7B:
            subs, path, ok = _parse_sub_selectors(path)
            if ok and (not path or path[0] in b"|."):
                b = bytearray((c0,))
                k = 0
                for name, spath in subs:
                    res = _get(j, spath, d)
                    if not res.exists:
                        continue
                    if k > 0:
                        b.append(0x2C)
                    if c0 == 0x7B:
                        if name:
                            if name[0] == _QUOTE and _valid(name):
                                b += name
                            else:
                                b += _append_json_string(name)
                        else:
                            last = _name_of_last(spath)
                            b += _append_json_string(last if _is_simple_name(last) else b"_")
                        b.append(0x3A)
                    raw = res.raw
                    if not raw:
                        raw = res.string() or b"null"
                    b += raw
                    k += 1
                b.append(c0 + 2)
                _built(b)
                if path:
                    return _get(bytes(b), path[1:], d)
                return Result(JSON, bytes(b))
    c = _Ctx(j)
    if path[:2] == b"..":
        _parse_array(c, 0, path[2:], d)
    else:
        m = _CONTAINER_START.search(j)
        if m is not None:
            i = m.start()
            if j[i] == 0x7B:
                _parse_object(c, i + 1, path, d)
            else:
                _parse_array(c, i + 1, path, d)
    if c.piped:
        return _get(c.value.raw, c.pipe, d)
    return c.value
