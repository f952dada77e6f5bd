"""Go's ``encoding/json`` scanner as an iterative parser over bytes: ``checkValid`` and the
decode into ``interface{}``, with Go's syntax errors byte for byte."""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Callable
from json import decoder as _decoder
from typing import Any, Final

# Go's scanner refuses nesting deeper than this (encoding/json scanner.go maxNestingDepth).
_MAX_DEPTH: Final = 10000
_EOF: Final = "unexpected end of JSON input"

# --- bytes to text the way Go does it -------------------------------------------------------------


def _per_byte_replace(exc: UnicodeError) -> tuple[str, int]:
    # Go's utf8.DecodeRune rejects an invalid sequence one byte at a time, so every byte of it
    # becomes its own U+FFFD; Python's "replace" gives one U+FFFD per maximal invalid subpart.
    assert isinstance(exc, UnicodeDecodeError)
    return "\ufffd" * (exc.end - exc.start), exc.end


_REPLACE: Final = "gojson.per-byte-replace"
codecs.register_error(_REPLACE, _per_byte_replace)


def _text(data: bytes) -> str:
    return data.decode("utf-8", _REPLACE)


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data


# --- the exact path: an iterative parser over bytes that follows Go's scanner ---------------------

_WS_RE: Final = re.compile(rb"[ \t\r\n]*+")
# The C string decoder behind json.loads (undeclared in typeshed): (text, index after the quote,
# strict) -> (value, index after the closing quote).
_scanstring: Callable[[str, int, bool], tuple[str, int]] = _decoder.scanstring  # type: ignore[attr-defined]


def _skip_ws(data: bytes, pos: int) -> int:
    match = _WS_RE.match(data, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


# A complete, valid string token (possessive, so a failed match costs linear time).
_STRING_RE: Final = re.compile(rb'"((?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+)"')
_NUMBER_RE: Final = re.compile(rb"-?(?:0|[1-9][0-9]*+)(\.[0-9]++)?([eE][-+]?[0-9]++)?")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# Validation only: a run of ", scalar" (array) or ", "key": scalar" (object) members in one regex
# call. A scalar must end where Go's scanner would end it (a number or literal is followed by
# whitespace or punctuation), so the run stops before anything the byte-by-byte path must judge.
_END: Final = rb"(?=[ \t\r\n,\]}])"
_SCALAR: Final = (
    rb'(?:"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"'
    rb"|-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?"
    + _END
    + rb"|(?:true|false|null)"
    + _END
    + rb")"
)
_STRING: Final = rb'"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"'
_W: Final = rb"[ \t\r\n]*+"
_MEMBER: Final = _STRING + _W + rb":" + _W + _SCALAR
# A container holding only scalars (one level deeper: used only below the depth limit).
_FLAT: Final = (
    rb"(?:\[" + _W + rb"(?:" + _SCALAR + rb"(?:" + _W + rb"," + _W + _SCALAR + rb")*+" + _W + rb")?\]"
    rb"|\{" + _W + rb"(?:" + _MEMBER + rb"(?:" + _W + rb"," + _W + _MEMBER + rb")*+" + _W + rb")?\})"
)
_ITEM: Final = rb"(?:" + _SCALAR + rb"|" + _FLAT + rb")"
_LIST_RUN: Final = re.compile(rb"(?:" + _W + rb"," + _W + _ITEM + rb")*+")
_DICT_RUN: Final = re.compile(rb"(?:" + _W + rb"," + _W + _STRING + _W + rb":" + _W + _ITEM + rb")*+")
_LIST_RUN_SCALARS: Final = re.compile(rb"(?:" + _W + rb"," + _W + _SCALAR + rb")*+")
_DICT_RUN_SCALARS: Final = re.compile(rb"(?:" + _W + rb"," + _W + _MEMBER + rb")*+")
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES: Final = frozenset(b'"\\/bfnrt')
_SPACE: Final = 0x20  # Go's scanner.eof() feeds one ' ' after the last byte


class _Syntax(Exception):
    """A syntax error; its argument is Go's message."""


def _quote_char(byte: int) -> str:
    """Go's ``quoteChar``: how a syntax error names the offending byte (as the rune of that value)."""
    if byte == 0x27:
        return "'\\''"
    if byte == 0x22:
        return "'\"'"
    # strconv.Quote(string(rune(byte))) without its double quotes.
    named = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}
    if byte in named:
        return f"'{named[byte]}'"
    if byte == 0x5C:
        return "'\\\\'"
    if byte < 0x20 or byte == 0x7F:
        return f"'\\x{byte:02x}'"
    char = chr(byte)
    if not char.isprintable():  # C1 controls, NBSP, soft hyphen: unicode.IsPrint is false for them
        return f"'\\u{byte:04x}'"
    return f"'{char}'"


def _invalid(byte: int, context: str) -> _Syntax:
    return _Syntax(f"invalid character {_quote_char(byte)} {context}")


def _at(data: bytes, pos: int) -> int:
    return data[pos] if pos < len(data) else _SPACE


def _string_error(data: bytes, pos: int) -> _Syntax:
    """The error in the string starting at ``data[pos] == '"'`` (the token regex did not match)."""
    n = len(data)
    pos += 1
    while pos < n:
        byte = data[pos]
        if byte == 0x5C:  # backslash
            esc = _at(data, pos + 1)
            if esc in _SIMPLE_ESCAPES:
                pos += 2
                continue
            if esc != 0x75:  # 'u'
                return _invalid(esc, "in string escape code")
            for offset in range(2, 6):
                if _at(data, pos + offset) not in _HEX:
                    return _invalid(_at(data, pos + offset), "in \\u hexadecimal character escape")
            pos += 6
            continue
        if byte < 0x20:
            return _invalid(byte, "in string literal")
        pos += 1
    return _Syntax(_EOF)  # Go's scanner treats the final ' ' as part of the string


def _decode_string(raw: bytes) -> str:
    """Go's ``unquote`` of a valid string body: per-byte U+FFFD, lone surrogate escapes -> U+FFFD."""
    if 0x5C not in raw:
        return raw.decode("ascii") if raw.isascii() else _text(raw)
    text, _ = _scanstring(_text(raw) + '"', 0, True)
    # Python keeps lone surrogates from \uD800-style escapes; Go replaces each with U+FFFD (a valid
    # pair has already been combined by scanstring, as Go's utf16.DecodeRune does).
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _number(data: bytes, pos: int) -> tuple[int, bytes]:
    """Scan the number at ``pos``; returns (end, literal). Errors as Go's number states give them."""
    match = _NUMBER_RE.match(data, pos)
    if match is None:  # a '-' without a digit
        raise _invalid(_at(data, pos + 1), "in numeric literal")
    end = match.end()
    fraction, exponent = match.group(1), match.group(2)
    if exponent is None:
        nxt = _at(data, end)
        if nxt == 0x2E and fraction is None:  # '.'
            raise _invalid(_at(data, end + 1), "after decimal point in numeric literal")
        if nxt in (0x65, 0x45):  # 'e' 'E'
            after = end + 1
            if _at(data, after) in (0x2B, 0x2D):
                after += 1
            raise _invalid(_at(data, after), "in exponent of numeric literal")
    return end, match.group(0)


_LITERALS: Final = {0x74: (b"true", True), 0x66: (b"false", False), 0x6E: (b"null", None)}


def _literal(data: bytes, pos: int) -> tuple[int, Any]:
    word, value = _LITERALS[data[pos]]
    if data.startswith(word, pos):
        return pos + len(word), value
    for offset in range(1, len(word)):
        got = _at(data, pos + offset)
        if got != word[offset]:
            name = word.decode()
            raise _invalid(got, f"in literal {name} (expecting '{chr(word[offset])}')")
    raise AssertionError("unreachable")  # pragma: no cover


class _Parsed:
    """The result of :func:`_parse`: the value, the saved (non-syntax) errors, the top-level pairs."""

    __slots__ = ("errors", "pairs", "value")

    def __init__(self) -> None:
        self.value: Any = None
        # Go's decoder keeps going after a number it cannot hold and reports the first such error.
        self.errors: list[str] = []  # the literals, in document order
        # Every member of a top-level object in document order (duplicates included), with the
        # slice of ``errors`` that arose inside its value.
        self.pairs: list[tuple[str, Any, int, int]] = []  # (key, value, errors start, errors end)


def _parse(data: bytes, *, build: bool = True) -> _Parsed:
    """Parse ``data`` as Go's ``checkValid`` + decoder into ``interface{}`` would; iterative.

    Raises :class:`_Syntax` with Go's message on the first syntax error (in byte order). With
    ``build=False`` it only validates (Go's ``checkValid``): no values, no saved errors.
    """
    return _Scanner(data, build).run()


class _Scanner:
    """One parse: Go's scanner states (a value, an object key, after a value) as methods over an
    explicit stack of open containers."""

    __slots__ = ("build", "containers", "data", "keys", "n", "pair_start", "pos", "result")

    def __init__(self, data: bytes, build: bool) -> None:
        self.data = data
        self.n = len(data)
        self.build = build
        self.result = _Parsed()
        self.containers: list[Any] = []  # open dicts and lists
        self.keys: list[str] = []  # the pending key of each open dict (placeholder "" for lists)
        self.pair_start = 0
        self.pos = _skip_ws(data, 0)

    def run(self) -> _Parsed:
        expect_key = False
        while True:
            if expect_key:
                self._key()
            value, opened = self._value()
            if opened is not None:  # a container opened: its first key (object) or value next
                expect_key = opened
                continue
            done, expect_key = self._complete(value)
            if done:
                return self.result

    def _need(self, pos: int) -> int:
        """The byte at ``pos``; Go's end-of-input error when there is none."""
        if pos >= self.n:
            raise _Syntax(_EOF)
        return self.data[pos]

    def _key(self) -> None:
        """After '{' (not empty) or ',' inside an object: a key string, ':' and whitespace."""
        data = self.data
        pos = self.pos
        if self._need(pos) != 0x22:
            raise _invalid(data[pos], "looking for beginning of object key string")
        match = _STRING_RE.match(data, pos)
        if match is None:
            raise _string_error(data, pos)
        pos = _skip_ws(data, match.end())
        if self._need(pos) != 0x3A:
            raise _invalid(data[pos], "after object key")
        self.keys[-1] = _decode_string(match.group(1)) if self.build else ""
        if len(self.containers) == 1:
            self.pair_start = len(self.result.errors)
        self.pos = _skip_ws(data, pos + 1)

    def _value(self) -> tuple[Any, bool | None]:
        """A value starts here: (the value, None) when it is complete, or (None, is an object) when
        a non-empty container opened."""
        data = self.data
        pos = self.pos
        byte = self._need(pos)
        if byte == 0x7B or byte == 0x5B:  # '{' '['
            return self._open(byte)
        if byte == 0x22:
            match = _STRING_RE.match(data, pos)
            if match is None:
                raise _string_error(data, pos)
            self.pos = match.end()
            return (_decode_string(match.group(1)) if self.build else None), None
        if byte == 0x2D or 0x30 <= byte <= 0x39:
            return self._number(), None
        if byte in _LITERALS:
            self.pos, value = _literal(data, pos)
            return value, None
        raise _invalid(byte, "looking for beginning of value")

    def _open(self, byte: int) -> tuple[Any, bool | None]:
        if len(self.containers) >= _MAX_DEPTH:
            raise _invalid(byte, "exceeded max depth")
        pos = _skip_ws(self.data, self.pos + 1)
        is_object = byte == 0x7B
        if self._need(pos) == byte + 2:  # '}' or ']' right away: an empty container
            self.pos = pos + 1
            return ({} if is_object else []), None
        self.containers.append({} if is_object else [])
        self.keys.append("")
        self.pos = pos
        return None, is_object

    def _number(self) -> float | None:
        self.pos, literal = _number(self.data, self.pos)
        if not self.build:
            return None
        value = float(literal)
        if math.isinf(value):  # Go's decoder goes on and reports the first such number later
            self.result.errors.append(literal.decode("ascii"))
        return value

    def _complete(self, value: Any) -> tuple[bool, bool]:
        """A value is complete: attach it, then close as many containers as the input closes.
        Returns (the document is done, an object key comes next)."""
        data = self.data
        containers = self.containers
        pos = self.pos
        while containers:
            parent = containers[-1]
            is_object = isinstance(parent, dict)
            pos = _skip_ws(data, self._attach(parent, is_object, value, pos))
            byte = self._need(pos)
            if byte == 0x2C:  # ','
                self.pos = _skip_ws(data, pos + 1)
                return False, is_object
            if byte != (0x7D if is_object else 0x5D):
                raise _invalid(byte, "after object key:value pair" if is_object else "after array element")
            value = containers.pop()
            self.keys.pop()
            pos += 1
        pos = _skip_ws(data, pos)
        if pos < self.n:
            raise _invalid(data[pos], "after top-level value")
        self.result.value = value
        return True, False

    def _attach(self, parent: Any, is_object: bool, value: Any, pos: int) -> int:
        """Put ``value`` into its container. Validating only, skip a run of the scalar members that
        follow in one regex call instead. Returns where scanning goes on."""
        if not self.build:
            if len(self.containers) < _MAX_DEPTH:
                runs = (_DICT_RUN, _LIST_RUN)
            else:  # a nested container here would exceed the limit: scalars only
                runs = (_DICT_RUN_SCALARS, _LIST_RUN_SCALARS)
            run = runs[0 if is_object else 1].match(self.data, pos)
            assert run is not None  # the pattern matches the empty string
            return run.end()
        if is_object:
            key = self.keys[-1]
            parent[key] = value
            if len(self.containers) == 1:
                self.result.pairs.append((key, value, self.pair_start, len(self.result.errors)))
        else:
            parent.append(value)
        return pos


def go_syntax_error(data: bytes | str) -> str | None:
    """The syntax error Go's ``json.Unmarshal`` reports for ``data``, or None if ``json.Valid``."""
    try:
        _parse(_as_bytes(data), build=False)
    except _Syntax as exc:
        return str(exc)
    return None
