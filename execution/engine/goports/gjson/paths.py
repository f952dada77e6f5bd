"""Splitting a path into its parts: object and array components, pipes, multipath selectors."""

from __future__ import annotations

import functools
from typing import Final

from execution.engine.goports.gjson.flavour import is_legacy
from execution.engine.goports.gjson.query import _parse_query, _skip_quoted
from execution.engine.goports.gjson.scan import _BACKSLASH, _QUOTE, _squash, _unescape

# --------------------------------------------------------------------------------------------
# Path parsing
# --------------------------------------------------------------------------------------------


class _ObjPath:
    __slots__ = ("more", "part", "path", "pipe", "piped", "wild")

    def __init__(self) -> None:
        self.part = b""
        self.path = b""
        self.pipe = b""
        self.piped = False
        self.wild = False
        self.more = False


class _ArrPath:
    __slots__ = (
        "alogkey",
        "alogok",
        "arrch",
        "more",
        "part",
        "path",
        "pipe",
        "piped",
        "q_all",
        "q_on",
        "q_op",
        "q_path",
        "q_value",
    )

    def __init__(self) -> None:
        self.part = b""
        self.path = b""
        self.pipe = b""
        self.piped = False
        self.more = False
        self.alogok = False
        self.arrch = False
        self.alogkey = b""
        self.q_on = False
        self.q_all = False
        self.q_path = b""
        self.q_op = b""
        self.q_value = b""


_MODIFIER_NAMES: Final = frozenset(
    (
        b"pretty",
        b"ugly",
        b"reverse",
        b"this",
        b"flatten",
        b"join",
        b"valid",
        b"keys",
        b"values",
        b"tostr",
        b"fromstr",
        b"group",
        b"dig",
    )
)


def _is_dot_piper(s: bytes) -> bool:
    """After a '.', does ``s`` start a modifier, a multipath or (not) a plain key?"""
    c = s[0]
    if c == 0x40:  # '@'
        i = 1
        n = len(s)
        while i < n and s[i] not in b".|:":
            i += 1
        name = s[1:i]
        return name in _MODIFIER_NAMES and not (name == b"dig" and is_legacy())
    return c == 0x5B or c == 0x7B


def _parse_object_path(path: bytes) -> _ObjPath:
    """gjson ``parseObjectPath`` (memoised: the result is never mutated, paths repeat per row)."""
    return _parse_object_path_of(path, is_legacy())


@functools.lru_cache(maxsize=1024)
def _parse_object_path_of(path: bytes, legacy: bool) -> _ObjPath:
    """:func:`_parse_object_path` for one gjson flavour (``legacy`` is part of the cache key)."""
    r = _ObjPath()
    n = len(path)
    i = 0
    while i < n:
        c = path[i]
        if c == 0x7C:  # '|'
            r.part, r.pipe, r.piped = path[:i], path[i + 1 :], True
            return r
        if c == 0x2E:  # '.'
            r.part = path[:i]
            if i < n - 1 and _is_dot_piper(path[i + 1 :]):
                r.pipe, r.piped = path[i + 1 :], True
            else:
                r.path, r.more = path[i + 1 :], True
            return r
        if c == 0x2A or c == 0x3F:
            r.wild = True
        elif c == _BACKSLASH:
            epart = bytearray(path[:i])
            i += 1
            if i < n:
                epart.append(path[i])
                i += 1
                while i < n:
                    c = path[i]
                    if c == _BACKSLASH:
                        i += 1
                        if i < n:
                            epart.append(path[i])
                        i += 1
                        continue
                    if c == 0x2E:
                        r.part = bytes(epart)
                        if i < n - 1 and _is_dot_piper(path[i + 1 :]):
                            r.pipe, r.piped = path[i + 1 :], True
                        else:
                            r.path, r.more = path[i + 1 :], True
                        return r
                    if c == 0x7C:
                        r.part, r.pipe, r.piped = bytes(epart), path[i + 1 :], True
                        return r
                    if c == 0x2A or c == 0x3F:
                        r.wild = True
                    epart.append(c)
                    i += 1
            r.part = bytes(epart)
            return r
        i += 1
    r.part = path
    return r


def _parse_array_path(path: bytes) -> _ArrPath:
    r = _ArrPath()
    n = len(path)
    i = 0
    while i < n:
        c = path[i]
        if c == 0x7C:
            r.part, r.pipe, r.piped = path[:i], path[i + 1 :], True
            return r
        if c == 0x2E:
            r.part = path[:i]
            if not r.arrch and i < n - 1 and _is_dot_piper(path[i + 1 :]):
                r.pipe, r.piped = path[i + 1 :], True
            else:
                r.path, r.more = path[i + 1 :], True
            return r
        if c == 0x23:  # '#'
            r.arrch = True
            if i == 0 and n > 1:
                if path[1] == 0x2E:
                    r.alogok = True
                    r.alogkey = path[2:]
                    r.path = path[:1]
                elif path[1] == 0x5B or path[1] == 0x28:
                    r.q_on = True
                    qpath, op, value, fi, vesc, ok = _parse_query(path[i:])
                    if not ok:
                        break
                    if len(value) >= 2 and value[0] == _QUOTE and value[-1] == _QUOTE:
                        value = value[1:-1]
                        if vesc:
                            value = _unescape(value)
                    r.q_path, r.q_op, r.q_value = qpath, op, value
                    i = fi - 1
                    if i + 1 < n and path[i + 1] == 0x23:
                        r.q_all = True
        i += 1
    r.part = path
    r.path = b""
    return r


def _split_possible_pipe(path: bytes) -> tuple[bytes, bytes, bool]:
    """gjson ``splitPossiblePipe``: split the rest of a path at its first top-level '|'."""
    if b"|" not in path:
        return b"", b"", False
    if path[:1] == b"{":
        return _split_multipath_pipe(path)
    n = len(path)
    i = 0
    while i < n:
        c = path[i]
        if c == _BACKSLASH:
            i += 1
        elif c == 0x7C:
            return path[:i], path[i + 1 :], True
        elif c == 0x2E:
            if i == n - 1:
                return b"", b"", False
            if path[i + 1] == 0x23:  # '.#': a query's brackets may hold a '|'
                i += 2
                if i == n:
                    return b"", b"", False
                if path[i] in b"[(":
                    i = _group_end(path, i)
        i += 1
    return b"", b"", False


def _split_multipath_pipe(path: bytes) -> tuple[bytes, bytes, bool]:
    squashed = _squash(path[1:])
    if len(squashed) < len(path) - 1:
        squashed = path[: len(squashed) + 1]
        remain = path[len(squashed) :]
        if remain[:1] == b"|":
            return squashed, remain[1:], True
    return b"", b"", False


def _group_end(s: bytes, i: int) -> int:
    """Index of the bracket closing the '[' or '(' at ``s[i]`` (strings skipped), or the end."""
    start = s[i]
    end = 0x5D if start == 0x5B else 0x29
    n = len(s)
    depth = 1
    i += 1
    while i < n:
        c = s[i]
        if c == _BACKSLASH:
            i += 1
        elif c == start:
            depth += 1
        elif c == end:
            depth -= 1
            if depth == 0:
                return i
        elif c == _QUOTE:
            i, _ = _skip_quoted(s, i)
        i += 1
    return i


def _selector(path: bytes, start: int, colon: int, end: int) -> tuple[bytes, bytes]:
    """One multipath member ``name:path`` or ``path`` as (name, path)."""
    if colon == 0:
        return b"", path[start:end]
    return path[start:colon], path[colon + 1 : end]


def _parse_sub_selectors(path: bytes) -> tuple[list[tuple[bytes, bytes]], bytes, bool]:
    """gjson ``parseSubSelectors``: the members of ``[a,b]`` / ``{a,b}``, the rest, ok."""
    sels: list[tuple[bytes, bytes]] = []
    modifier = 0
    depth = 1
    colon = 0
    start = 1
    n = len(path)
    i = 1
    while i < n:
        c = path[i]
        if c == _BACKSLASH:
            i += 1
        elif c == 0x40:
            if modifier == 0 and path[i - 1] in b".|":
                modifier = i
        elif c == 0x3A:
            if modifier == 0 and colon == 0 and depth == 1:
                colon = i
        elif c == 0x2C:
            if depth == 1:
                sels.append(_selector(path, start, colon, i))
                colon = modifier = 0
                start = i + 1
        elif c == _QUOTE:
            i, _ = _skip_quoted(path, i)
        elif c in b"[({":
            depth += 1
        elif c in b"])}":
            depth -= 1
            if depth == 0:
                sels.append(_selector(path, start, colon, i))
                return sels, path[i + 1 :], True
        i += 1
    return [], b"", False


def _name_of_last(path: bytes) -> bytes:
    for i in range(len(path) - 1, -1, -1):
        if path[i] in b"|.":
            if i > 0 and path[i - 1] == _BACKSLASH:
                continue
            return path[i + 1 :]
    return path


def _is_simple_name(comp: bytes) -> bool:
    return all(c >= 0x20 and c not in b"[]{}()#|!" for c in comp)


_HEX: Final = b"0123456789abcdef"
