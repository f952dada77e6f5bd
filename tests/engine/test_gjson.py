"""The pure-Python gjson answers exactly as Go gjson v1.18.0 (KServe's router) does."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from execution.engine.goports import gjson
from tests.engine.gjson_oracle import ORACLE, VECTORS, ask

VECTOR_LIST: list[dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))


def _b(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@pytest.mark.parametrize(
    "vector", VECTOR_LIST, ids=[f"{i}:{v['path'][:40]}" for i, v in enumerate(VECTOR_LIST)]
)
def test_recorded_go_vector(vector: dict[str, Any]) -> None:
    """Each recorded (document, path) gives Go's ValidBytes, Exists and Raw, byte for byte."""
    doc = _b(vector["doc"])
    result = gjson.get_bytes(doc, _b(vector["path"]))
    assert (gjson.valid(doc), result.exists, result.raw) == (
        vector["valid"],
        vector["exists"],
        _b(vector["raw"]),
    )


def test_vectors_cover_the_syntax() -> None:
    """The recorded set exercises every modifier, literal form, query operator and prefix."""
    paths = " ".join(v["path"] for v in VECTOR_LIST)
    for needle in [
        "@reverse",
        "@ugly",
        "@pretty",
        "@this",
        "@valid",
        "@flatten",
        "@join",
        "@keys",
        "@values",
        "@tostr",
        "@fromstr",
        "@group",
        "@dig:",
        "!true",
        "!false",
        "!null",
        "!0",
        '!"lit"',
        "!{}",
        "==",
        "!=",
        "<=",
        ">=",
        "%",
        "!%",
        "~true",
        "~false",
        "~null",
        "~*",
        ")#",
        "#.",
        "..",
        "|",
        "\\.",
        "*",
        "?",
        "[",
        "{",
    ]:
        assert needle in paths, needle
    assert len(VECTOR_LIST) >= 250


def test_text_documents_return_text_raw() -> None:
    """A str document gives a str raw (the same bytes); a bytes document gives bytes."""
    assert gjson.get('{"a":[1, 2]}', "a").raw == "[1, 2]"
    assert gjson.get(b'{"a":[1, 2]}', "a").raw == b"[1, 2]"
    assert gjson.get('{"a":"\u00e9"}', "a").value() == "\u00e9"


def test_value_as_python() -> None:
    """value(): ints for integer literals, floats otherwise, first duplicate key wins."""
    res = gjson.get_bytes(b'{"a":{"x":1,"y":[2.5,"s",true,null],"x":9}}', "a")
    assert res.value() == {"x": 1, "y": [2.5, "s", True, None]}
    assert gjson.get_bytes(b"{}", "missing").value() is None
    assert gjson.get_bytes(b'{"a":"q\\"\\u00e9"}', "a").value() == 'q"\u00e9'


def test_deep_document_is_handled_without_recursion() -> None:
    """400,000 nested '[' neither crashes nor raises RecursionError (Go: invalid, '#' is 1)."""
    deep = b"[" * 400_000
    assert gjson.valid(deep) is False
    assert gjson.get_bytes(deep, "#").raw == b"1"
    closed = b"[" * 400_000 + b"]" * 400_000
    assert gjson.valid(closed) is True
    assert gjson.get_bytes(closed, "0.0.0.#").raw == b"1"
    assert gjson.get_bytes(closed, "@this").exists
    pretty = gjson.get_bytes(b"[" * 300 + b"]" * 300, "@pretty").raw
    assert pretty.count(b"\n") == 599 and pretty.endswith(b"]\n")
    flat = gjson.get_bytes(b"[" * 300 + b"1" + b"]" * 300, '@flatten:{"deep":true}').raw
    assert flat == b"[1]"
    assert gjson.get_bytes(closed, "@this").value() is not None


def test_deep_object_document_validates_iteratively() -> None:
    """Deep objects take the iterative validator too, with Go's answer."""
    doc = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    assert gjson.valid(doc) is True
    assert gjson.valid(doc[:-1]) is False


def test_path_nesting_is_bounded() -> None:
    """A path nesting deeper than MAX_PATH_NESTING levels is refused, not a RecursionError."""
    path = ".".join(["a"] * (gjson.MAX_PATH_NESTING + 5))
    doc = b'{"a":' * (gjson.MAX_PATH_NESTING + 5) + b"1" + b"}" * (gjson.MAX_PATH_NESTING + 5)
    with pytest.raises(gjson.PathTooComplex):
        gjson.get_bytes(doc, path)
    ok_path = ".".join(["a"] * 50)
    ok_doc = b'{"a":' * 50 + b"1" + b"}" * 50
    assert gjson.get_bytes(ok_doc, ok_path).raw == b"1"


def test_runaway_paths_are_refused() -> None:
    """Paths whose output or work grows without bound raise TooMuchWork, promptly."""
    doc = b'{"a":"' + b'\\"' * 1000 + b'"}'
    with pytest.raises(gjson.TooMuchWork):
        gjson.get_bytes(doc, "a" + "|@tostr" * 40)
    deep = b"[" * 20_000 + b"]" * 20_000
    with pytest.raises(gjson.TooMuchWork):
        gjson.get_bytes(deep, "@dig:x")
    assert gjson.get_bytes(b'{"a":[{"x":1},{"b":{"x":2}}]}', "@dig:x").raw == b"[1,2]"


def test_refusal_is_a_non_match_for_conditions() -> None:
    """The engine reads a refused condition as not matching, with the reason."""
    from execution.engine.conditions import condition_exists, evaluate_condition

    deep = b"[" * 20_000 + b"]" * 20_000
    assert condition_exists(deep, "@dig:x") is False
    assert "revisits more than" in (evaluate_condition(deep, "@dig:x").reason or "")


def test_wildcard_budget_gives_no_match() -> None:
    """A pattern over the 10,000-step match budget does not match (match.MatchLimit stops)."""
    doc = b'[{"s":"' + b"a" * 200 + b'"}]'
    assert gjson.get_bytes(doc, "#(s%" + "*a" * 60 + "*b)").exists is False
    assert gjson.get_bytes(doc, "#(s%" + "a*" * 3 + ")").exists is True


# ---- differential test against the Go binary ------------------------------------------------

KEYS = ["a", "b", "c", "", "a.b", "x y", "é", "k*", "a\\", "1", "0", 'q"', "ü\u2028", "\u00e9t\u00e9"]
STRINGS = [
    "",
    "a",
    "b",
    "abc",
    "x y",
    "é",
    "\\u00e9",
    '\\"',
    "\\\\",
    "\\n",
    "\\ud83d\\ude00",
    "\\u2028",
    "<&>",
    "true",
    "1",
    "2",
    "10",
    "red-server",
    "\\/",
    "\\b\\f\\t",
    "a*b",
    "日本",
]
NUMBERS = ["0", "-0", "1", "2", "10", "-1.5", "1e3", "1E-2", "2.50", "12345678901234567890", "0.1", "-7"]


def _rand_doc(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth < 4 and roll < 0.3:
        n = rng.randint(0, 4)
        items = []
        for _ in range(n):
            key = rng.choice(KEYS).replace("\\", "\\\\").replace('"', '\\"')
            items.append(f'"{key}"{rng.choice([":", " : ", ":"])}{_rand_doc(rng, depth + 1)}')
        return "{" + rng.choice([",", ", ", ",\n "]).join(items) + "}"
    if depth < 4 and roll < 0.55:
        n = rng.randint(0, 4)
        sep = rng.choice([",", ", ", " ,"])
        return "[" + sep.join(_rand_doc(rng, depth + 1) for _ in range(n)) + "]"
    if roll < 0.75:
        return '"' + rng.choice(STRINGS) + '"'
    if roll < 0.9:
        return rng.choice(NUMBERS)
    return rng.choice(["true", "false", "null"])


def _mutate(rng: random.Random, doc: bytes) -> bytes:
    roll = rng.random()
    if roll < 0.06 and doc:
        return doc[: rng.randrange(len(doc))]
    if roll < 0.1:
        pos = rng.randint(0, len(doc))
        return doc[:pos] + rng.choice([b",", b"]", b"}", b'"', b"\xff", b"x", b" ", b"NaN"]) + doc[pos:]
    if roll < 0.13:
        return b"  " + doc + b"\n"
    return doc


COMPONENTS = [
    *["a", "b", "c", "0", "1", "2", "#", "*", "?", "a*", "?b", "x y", "é", "a\\.b", "k\\*"],
    *["1a", "", "é*", "?t?", "*\\*", 'q\\"', "#[a==1]", "a\\|b", "@", "!"],
]
OPS = ["==", "=", "!=", "<", "<=", ">", ">=", "%", "!%"]
VALUES = [
    '"a"',
    "a",
    "1",
    "2",
    "10",
    '"10"',
    "true",
    "false",
    "null",
    "~true",
    "~false",
    "~null",
    "~*",
    '"*b*"',
    "*",
    "-1.5",
    '"é"',
    '""',
    '"é*"',
    '"*\\\\**"',
    '"?"',
    '"[*"',
    "0x1p3",
    "1e400",
    "inf",
    "NaN",
    '"\\u00e9"',
]
MODIFIERS = [
    "@this",
    "@keys",
    "@values",
    "@reverse",
    "@ugly",
    "@pretty",
    "@flatten",
    '@flatten:{"deep":true}',
    "@join",
    '@join:{"preserve":true}',
    "@valid",
    "@tostr",
    "@fromstr",
    "@group",
    "@dig:a",
    "@dig:b.0",
    '@pretty:{"sortKeys":true,"width":8}',
    "@nosuch",
]
LITERALS = ["!true", "!false", "!null", "!0", '!"lit"', "!{}", "![1]", "!-2.5", "!nan", "!x"]


def _rand_path(rng: random.Random, depth: int = 0) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.45:
            part = rng.choice(COMPONENTS)
        elif roll < 0.62 and depth < 2:
            inner = rng.choice(["a", "b", "a.b", "0", "", "#", "c.#"])
            if depth < 1 and rng.random() < 0.2:
                inner = "b.#(" + rng.choice(OPS) + rng.choice(VALUES) + ")"
            op = rng.choice([*OPS, ""])
            val = rng.choice(VALUES) if op else ""
            part = f"#({inner}{op}{val})" + rng.choice(["", "#"])
        elif roll < 0.75:
            part = rng.choice(MODIFIERS)
        elif roll < 0.82:
            part = rng.choice(LITERALS)
        elif roll < 0.9 and depth < 2:
            subs = [_rand_path(rng, depth + 1) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.5:
                part = "[" + ",".join(subs) + "]"
            else:
                part = "{" + ",".join(rng.choice(["", '"n":', "k:"]) + s for s in subs) + "}"
        else:
            part = "#." + rng.choice(COMPONENTS)
        parts.append(part)
    path = parts[0]
    for part in parts[1:]:
        path += rng.choice([".", "|", "."]) + part
    if depth == 0 and rng.random() < 0.05:
        path = ".." + path
    return path


DIFF_DOCS = 1000  # documents per run
DIFF_PATHS = 12  # paths per document: 12,000 path x document pairs (minus NUL-byte documents)


@pytest.mark.skipif(not ORACLE.exists(), reason=f"the Go gjson oracle is not at {ORACLE}")
def test_differential_against_go_gjson() -> None:
    """Thousands of seeded random (document, path) pairs: Exists, Raw and ValidBytes agree."""
    rng = random.Random(20261130)
    disagreements: list[str] = []
    compared = 0
    for _ in range(DIFF_DOCS):
        doc = _mutate(rng, _rand_doc(rng).encode())
        if b"\x00" in doc:
            continue
        paths = [_rand_path(rng).encode() for _ in range(DIFF_PATHS)]
        valid, answers = ask(doc, paths)
        if gjson.valid(doc) != valid:
            disagreements.append(f"valid {doc!r}: go {valid}")
        for path, (exists, raw) in zip(paths, answers, strict=True):
            compared += 1
            try:
                res = gjson.get_bytes(doc, path)
                mine: tuple[bool, bytes] = (res.exists, res.raw)
            except gjson.PathTooComplex as exc:  # never expected for these short paths
                mine = (False, repr(exc).encode())
            if mine != (exists, raw):
                disagreements.append(f"{doc!r} {path!r}: go {(exists, raw)!r} py {mine!r}")
    assert compared >= 10_000
    assert disagreements == [], "\n".join(disagreements[:20]) + f"\n({len(disagreements)} total)"


BIG_PATHS = ["z", "b.x", "a.#", "b.c.#", "z.1", "a.#(a)#", "b|@keys", "@this|z", "..#", "a.5", "b.c.7.a"]


@pytest.mark.skipif(not ORACLE.exists(), reason=f"the Go gjson oracle is not at {ORACLE}")
def test_differential_on_big_values_against_go_gjson() -> None:
    """Values with more than 64 brackets (skipped by the C scanner when valid) agree with Go too."""
    rng = random.Random(20261201)
    disagreements: list[str] = []
    compared = 0
    for _ in range(120):
        inner = "[" + ",".join(_rand_doc(rng) for _ in range(rng.randint(20, 60))) + "]"
        doc = _mutate(rng, f'{{"a":{inner},"b":{{"c":{inner},"x":1}},"z":[1,2]}}'.encode())
        if b"\x00" in doc:
            continue
        paths = [rng.choice(BIG_PATHS).encode() for _ in range(8)]
        paths += [_rand_path(rng).encode() for _ in range(8)]
        valid, answers = ask(doc, paths)
        if gjson.valid(doc) != valid:
            disagreements.append(f"valid {doc[:80]!r}: go {valid}")
        for path, (exists, raw) in zip(paths, answers, strict=True):
            compared += 1
            res = gjson.get_bytes(doc, path)
            if (res.exists, res.raw) != (exists, raw):
                disagreements.append(f"{doc[:80]!r} {path!r}: go {exists} {raw[:80]!r}")
    assert compared >= 1800
    assert disagreements == [], "\n".join(disagreements[:20])
