"""The walk: gjson's ``parseObject``, ``parseArray`` and ``Get`` (multipaths, modifiers, pipes).

Objects and arrays share what Go copies between them: the value reading and skipping tables of
:mod:`.scan` and :func:`_member` (a member the path names: its value, or the walk into it).
Recursion follows the path (one level per component, bounded by ``MAX_PATH_NESTING``), never the
document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from execution.engine.goports.gjson.match import _match_limit
from execution.engine.goports.gjson.modifiers import _append_json_string, _exec_modifier, _exec_static
from execution.engine.goports.gjson.paths import (
    _is_simple_name,
    _name_of_last,
    _parse_array_path,
    _parse_object_path,
    _parse_sub_selectors,
    _split_possible_pipe,
)
from execution.engine.goports.gjson.query import _query_matches
from execution.engine.goports.gjson.result import (
    JSON,
    MAX_PATH_NESTING,
    NUMBER,
    PathTooComplex,
    Result,
    _built,
    _parse_uint,
)
from execution.engine.goports.gjson.scan import (
    _ARRAY_VALUE_START,
    _CONTAINER_START,
    _KEY_OR_CLOSE,
    _QUOTE,
    _READ,
    _SKIP,
    _VALUE_START,
    _parse,
    _parse_any,
    _string_end,
    _unescape,
)
from execution.engine.goports.gjson.validate import _valid


class _Ctx:
    __slots__ = ("calcd", "json", "pipe", "piped", "value")

    def __init__(self, j: bytes) -> None:
        self.json = j
        self.value = Result()
        self.pipe = b""
        self.piped = False
        self.calcd = False


def _nest(d: int) -> int:
    d += 1
    if d > MAX_PATH_NESTING:
        raise PathTooComplex(f"the path nests deeper than {MAX_PATH_NESTING} levels")
    return d


def _member(c: _Ctx, i: int, more: bool, path: bytes, d: int) -> tuple[int, bool | None]:
    """The value at ``c.json[i]`` that the current path component named.

    The last component (``more`` false) takes the value; otherwise the walk goes into it with the
    rest of the path. Returns (next index, True found / False stop the walk / None go on).
    """
    j = c.json
    ch = j[i]
    if not more:
        i, res = _READ[ch](j, i)
        if res is None:
            return i, False
        c.value = res
        return i, True
    if ch == 0x7B:
        i, hit = _parse_object(c, i + 1, path, d)
    elif ch == 0x5B:
        i, hit = _parse_array(c, i + 1, path, d)
    else:
        i = _SKIP[ch](j, i)
        return (len(j), False) if i < 0 else (i, None)
    return i, (True if hit else None)


def _parse_object(c: _Ctx, i: int, path: bytes, d: int) -> tuple[int, bool]:
    """gjson ``parseObject``: ``i`` is just past the '{'; (next index, found)."""
    d = _nest(d)
    rp = _parse_object_path(path)
    if not rp.more and rp.piped:
        c.pipe, c.piped = rp.pipe, True
    j = c.json
    n = len(j)
    part, wild = rp.part, rp.wild
    while i < n:
        m = _KEY_OR_CLOSE.search(j, i)
        if m is None:
            return n, False
        i = m.start()
        if j[i] == 0x7D:  # '}'
            return i + 1, False
        q, kesc = _string_end(j, i + 1)
        if q < 0:
            return n, False
        key = _unescape(j[i + 1 : q]) if kesc else j[i + 1 : q]
        m = _VALUE_START.search(j, q + 1)
        if m is None:
            return n, False
        i = m.start()
        if _match_limit(key, part) if wild else part == key:
            i, found = _member(c, i, rp.more, rp.path, d)
            if found is not None:
                return i, found
        else:
            i = _SKIP[j[i]](j, i)
            if i < 0:
                return n, False
    return i, False


def _next_element(j: bytes, i: int) -> int:
    """Where the next array element or the array's ']' starts, at or after ``i``; the end of ``j``
    when neither does (gjson reads the end as the ']')."""
    m = _ARRAY_VALUE_START.search(j, i)
    return len(j) if m is None else m.start()


def _parse_array(c: _Ctx, i: int, path: bytes, d: int) -> tuple[int, bool]:
    """gjson ``parseArray``: ``i`` is just past the '['; (next index, found).

    Go runs one loop for its three kinds of array component; they are three walks here: an index
    (``2``), a query (``#(...)``, ``#(...)#``) and the rest of ``#`` (count, ``#.key``).
    """
    d = _nest(d)
    rp = _parse_array_path(path)
    if not rp.more and rp.piped:
        c.pipe, c.piped = rp.pipe, True
    if rp.q_on:
        return _array_query(c, i, rp, d)
    if rp.arrch:
        return _array_hash(c, i, rp, d)
    return _array_index(c, i, rp, d)


def _array_index(c: _Ctx, i: int, rp: _ArrPath, d: int) -> tuple[int, bool]:
    j = c.json
    n = len(j)
    u = _parse_uint(rp.part)
    target = -1 if u is None else u
    h = 0
    while i <= n:
        i = _next_element(j, i)
        if i == n or j[i] == 0x5D:
            return i + 1, False
        if h == target:
            i, found = _member(c, i, rp.more, rp.path, d)
            if found is not None:
                return i, found
        else:
            i = _SKIP[j[i]](j, i)
            if i < 0:
                return n, False
        h += 1
    return i, False


def _array_query(c: _Ctx, i: int, rp: _ArrPath, d: int) -> tuple[int, bool]:
    j = c.json
    n = len(j)
    multires = bytearray(b"[") if rp.q_all else None
    while i <= n:
        i = _next_element(j, i)
        if i == n or j[i] == 0x5D:
            break
        i, qval = _READ[j[i]](j, i)
        if qval is None:
            return i, False
        if _query_element(c, rp, qval, d, multires):
            return i, True
    else:
        return i, False
    if multires is not None and not c.value.exists:
        multires.append(0x5D)
        c.value = Result(JSON, _built(multires))
    return i + 1, False


def _query_element(c: _Ctx, rp: _ArrPath, qval: Result, d: int, multires: bytearray | None) -> bool:
    """Test one element against the query; the first match (``#(...)``) is the value, every match
    (``#(...)#``) is appended to ``multires``. True when the walk is done."""
    if qval.type == JSON:
        res = _get(qval.raw, rp.q_path, d)
    elif rp.q_path != b"":
        return False
    else:
        res = qval
    if not _query_matches(rp, res):
        return False
    if rp.more:
        left, right, ok = _split_possible_pipe(rp.path)
        if ok:
            rp.path = left
            c.pipe, c.piped = right, True
        res = _get(qval.raw, rp.path, d)
    else:
        res = qval
    if multires is None:
        c.value = res
        return True
    raw = res.raw or res.string()
    if raw:
        if len(multires) > 1:
            multires.append(0x2C)
        multires += raw
    return False


def _array_hash(c: _Ctx, i: int, rp: _ArrPath, d: int) -> tuple[int, bool]:
    """``#`` (the count), ``#.key`` (every element's key) or a component that only has a '#' in it
    (nothing: gjson walks to the end)."""
    j = c.json
    n = len(j)
    starts: list[int] = []
    while i <= n:
        starts.append(i)
        i = _next_element(j, i)
        if i == n or j[i] == 0x5D:
            break
        i = _SKIP[j[i]](j, i)
        if i < 0:
            return n, False
    else:
        return i, False
    if rp.part != b"#":
        return i + 1, False
    if rp.alogok:
        c.value = _collect_key(c, rp, starts, d)
        return i + 1, True
    count = len(starts) - 1
    c.value = Result(NUMBER, str(count).encode(), b"", float(count))
    c.calcd = True
    return i + 1, True


def _collect_key(c: _Ctx, rp: _ArrPath, starts: list[int], d: int) -> Result:
    """``#.key``: the key of every element that has it, as an array."""
    left, right, ok = _split_possible_pipe(rp.alogkey)
    if ok:
        rp.alogkey = left
        c.pipe, c.piped = right, True
    j = c.json
    n = len(j)
    out = bytearray(b"[")
    for start in starts:
        idx = _skip_ws(j, start)
        if idx >= n or j[idx] == 0x5D:
            continue
        _, res, ok = _parse_any(j, idx)
        if ok:
            res = _get(res.raw, rp.alogkey, d)
            if res.exists:
                if len(out) > 1:
                    out.append(0x2C)
                out += res.raw or res.string()
    out.append(0x5D)
    return Result(JSON, _built(out))


def _skip_ws(j: bytes, i: int) -> int:
    n = len(j)
    while i < n and j[i] in b" \t\r\n":
        i += 1
    return i


def _get(j: bytes, path: bytes, d: int) -> Result:
    """gjson ``Get``: ``path`` on ``j``, ``d`` path levels deep."""
    d = _nest(d)
    if len(path) > 1:
        c0 = path[0]
        if c0 == 0x40 or c0 == 0x21:  # '@' or '!'
            res = _get_modified(j, path, d, c0)
            if res is not None:
                return res
        elif c0 == 0x5B or c0 == 0x7B:
            res = _get_multipath(j, path, d, c0)
            if res is not None:
                return res
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


def _get_modified(j: bytes, path: bytes, d: int, c0: int) -> Result | None:
    """A path starting with a modifier (``@``) or a static value (``!``); None when it is not one."""
    if c0 == 0x40:
        npath, rjson, ok = _exec_modifier(j, path, d)
    else:
        npath, rjson, ok = _exec_static(path)
    if not ok:
        return None
    if npath[:1] in (b"|", b"."):
        return _get(rjson, npath[1:], d)
    return _parse(rjson)


def _get_multipath(j: bytes, path: bytes, d: int, c0: int) -> Result | None:
    """``[a,b]`` or ``{a,b}``: the selectors' values in a new array or object; None when the
    path is not a well-formed multipath."""
    subs, rest, ok = _parse_sub_selectors(path)
    if not ok or (rest and rest[0] not in b"|."):
        return None
    b = bytearray((c0,))
    for name, spath in subs:
        res = _get(j, spath, d)
        if not res.exists:
            continue
        if len(b) > 1:
            b.append(0x2C)
        if c0 == 0x7B:
            b += _multipath_key(name, spath)
            b.append(0x3A)
        b += res.raw or res.string() or b"null"
    b.append(c0 + 2)
    built = _built(b)
    if rest:
        return _get(built, rest[1:], d)
    return Result(JSON, built)


def _multipath_key(name: bytes, spath: bytes) -> bytes:
    """The key of one member of an object multipath: its given name, else the path's last part."""
    if name:
        if name[0] == _QUOTE and _valid(name):
            return name
        return _append_json_string(name)
    last = _name_of_last(spath)
    return _append_json_string(last if _is_simple_name(last) else b"_")


if TYPE_CHECKING:
    from execution.engine.goports.gjson.paths import _ArrPath
