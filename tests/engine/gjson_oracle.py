"""Ask the Go gjson v1.18.0 reference binary (``../shared/oracle/gjson``) and read its answers.

The binary is ``gjson DOC PATH...``; it prints ``ValidBytes=<bool>`` and then, per path,
``<path %q> exists=<bool> raw=<raw %q>``. Tests that use it skip when it is missing; the answers
that the other tests rely on are recorded in ``data/gjson-vectors.json``
(``python -m tests.engine.gjson_oracle`` re-records them).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# ``$KSERVE_ORACLE_DIR`` overrides the place (a git worktree is not beside ``shared/``).
ORACLE = Path(os.environ.get("KSERVE_ORACLE_DIR") or ROOT.parent / "shared" / "oracle") / "gjson"
VECTORS = Path(__file__).parent / "data" / "gjson-vectors.json"

_GO_QUOTED = r'"(?:[^"\\]|\\.)*"'
_LINE = re.compile(rf"^({_GO_QUOTED})\s+exists=(true|false)\s+raw=({_GO_QUOTED})$")
_SIMPLE = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34, "'": 39}


def go_unquote(quoted: str) -> bytes:
    """Invert Go's ``strconv.Quote`` (as ``%q`` prints it) back to the original bytes."""
    body = quoted[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode()
            i += 1
            continue
        e = body[i + 1]
        if e in _SIMPLE:
            out.append(_SIMPLE[e])
            i += 2
        elif e == "x":
            out.append(int(body[i + 2 : i + 4], 16))
            i += 4
        elif e == "u":
            out += chr(int(body[i + 2 : i + 6], 16)).encode("utf-8", "surrogatepass")
            i += 6
        elif e == "U":
            out += chr(int(body[i + 2 : i + 10], 16)).encode()
            i += 10
        else:  # octal \NNN
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
    return bytes(out)


def ask(doc: bytes, paths: list[bytes]) -> tuple[bool, list[tuple[bool, bytes]]]:
    """ValidBytes(doc) and (Exists, Raw) of GetBytes(doc, path) for each path, from Go."""
    proc = subprocess.run([str(ORACLE), doc, *paths], capture_output=True, check=True, timeout=60)
    lines = proc.stdout.decode("utf-8").split("\n")
    assert lines[0].startswith("ValidBytes="), lines[0]
    valid = lines[0] == "ValidBytes=true"
    answers: list[tuple[bool, bytes]] = []
    for line in lines[1:]:
        if not line:
            continue
        m = _LINE.match(line)
        assert m is not None, line
        answers.append((m.group(2) == "true", go_unquote(m.group(3))))
    assert len(answers) == len(paths), (len(answers), len(paths))
    return valid, answers


# Hand-written cases: gjson's README/SYNTAX examples, the query rules of docs/router-semantics.md ("GJSON"), the
# differences pygjson had, and odd input. (document, [paths])
SYNTAX_DOC = (
    '{"name":{"first":"Tom","last":"Anderson"},"age":37,"children":["Sara","Alex","Jack"],'
    '"fav.movie":"Deer Hunter","friends":[{"first":"Dale","last":"Murphy","age":44,'
    '"nets":["ig","fb","tw"]},{"first":"Roger","last":"Craig","age":68,"nets":["fb","tw"]},'
    '{"first":"Jane","last":"Murphy","age":47,"nets":["ig","tw"]}]}'
)
CASES: list[tuple[str, list[str]]] = [
    (
        SYNTAX_DOC,
        [
            "name.last",
            "age",
            "children",
            "children.#",
            "children.1",
            "child*.2",
            "c?ildren.0",
            "fav\\.movie",
            "friends.#.first",
            "friends.1.last",
            "friends.#",
            "friends.#.age",
            'friends.#(last=="Murphy").first',
            'friends.#(last=="Murphy")#.first',
            "friends.#(age>45)#.last",
            'friends.#(first%"D*").last',
            'friends.#(first!%"D*").last',
            'friends.#(nets.#(=="fb"))#.first',
            'children.#(!%"*a*")',
            'children.#(%"*a*")#',
            "friends.0.first",
            "friends|0.first",
            "friends.0|first",
            "friends|0|first",
            "friends|#",
            'friends.#(last="Murphy")#',
            'friends.#(last="Murphy")#.first',
            'friends.#(last="Murphy")#|first',
            'friends.#(last="Murphy")#.0',
            'friends.#(last="Murphy")#|0',
            'friends.#(last="Murphy")#.#',
            'friends.#(last="Murphy")#|#',
            "children.@reverse",
            "children.@reverse.0",
            "children|@reverse|0",
            "@this",
            "@keys",
            "@values",
            "name.@values",
            "friends.@flatten",
            "@ugly",
            "@pretty",
            '@pretty:{"sortKeys":true}',
            '@pretty:{"indent":"\\t","prefix":"  "}',
            '@pretty:{"width":20}',
            "@valid",
            "friends.#.nets|@flatten",
            '[friends.#.nets]|@flatten:{"deep":true}',
            '{name.first,age,"the_murphys":friends.#(last="Murphy")#.first}',
            "[name.first,age,children.0]",
            "{age,name}|@join",
            '[name,{"x":age}]|@join',
            '[name,{"first":"X"}]|@join:{"preserve":true}',
            "children|@tostr",
            "children|@tostr|@fromstr",
            "@dig:first",
            "@dig:nets.0",
            "friends.#(age>=47)#|@group",
            '{"a":children,"b":friends.#.age}|@group',
            "!true",
            "!false",
            "!null",
            "!0",
            '!"lit"',
            "!{}",
            "![1,2]",
            "!-1.5",
            "!NaN",
            "!inf",
            "!True",
            "!x",
            "!true.x",
            '!{"a":1}.a',
            '[!true,!"s",age]',
            '{"k":!null}',
            "friends.#(~*)",
            "friends.#(age==~true)#.first",
            "..#",
            "..0",
            "..name.first",
            "friends.#(last==Murphy)#.age",
            "friends.#(age!=44)#.age",
            "friends.#(age<47)#.age",
            "friends.#(age<=47)#.age",
            "friends.#(age>=47)#.age",
            'friends.#(first<"J")#.first',
            "name.*",
            "name.?ast",
            "*.first",
            "friends.#.nets.#",
            'friends.#.nets.#(=="ig")',
            'friends.#(nets.#(=="ig"))#.first',
            'friends.#[last="Craig"].first',
            "age.@this",
            "age|@tostr",
            "name|@tostr|@fromstr.first",
            "",
            ".",
            "..",
            "a..b",
            "friends.1.@keys",
            "@reverse|@keys",
            "name\\",
            "name.last\\",
            "fav\\.movie|@tostr",
        ],
    ),
    # The query rules of docs/router-semantics.md ("GJSON"), case by case.
    (
        '{"decision_picker":"ERROR","key1":{"name":"abc"}}',
        ["[@this].#(decision_picker==ERROR)", "[@this].#(decision_picker==SUCCESS)"],
    ),
    (
        '{"decision_picker":"NO_MATCH","key1":{"name":"abc"}}',
        ["[@this].#(decision_picker==ERROR)", "[@this].#(decision_picker==SUCCESS)"],
    ),
    ('{"decision_picker":"SUCCESS","key1":{"name":"abc"}}', ["[@this].#(decision_picker==SUCCESS)"]),
    (
        '{"decision_picker":"ERROR"}',
        [
            "#(decision_picker==ERROR)",
            "[@this].#( decision_picker == ERROR )",
            "[@this].#(decision_picker==error)",
        ],
    ),
    (
        '{"instances":[{"modelId":"2"}]}',
        ['instances.#(modelId=="2")', 'instances.#(modelId=="1")', "instances.#(modelId==2)"],
    ),
    ('{"predictions":[{"label":"dog","score":[0.8,0.2]}]}', ['predictions.#(label=="dog")']),
    (
        '{"source":"client1","instances":[{"intval":1,"strval":"hello-red-server-x"}]}',
        ["[@this].#(source==client)", "instances.#(intval>10)", "instances.#(strval%*red-server*)"],
    ),
    ('{"predictions":["It\'s a cat!"]}', ['[@this].#(predictions.0=="dog")']),
    ('{"predictions":["dog"]}', ['[@this].#(predictions.0=="dog")']),
    ('{"instances":[{"data":0.3}]}', ["[@this].#(instances.0.data>0.5 && instances.0.data<=0.9)"]),
    ('{"instances":[{"data":0.0}]}', ["[@this].#(instances.0.data>0.5 && instances.0.data<=0.9)"]),
    ('{"a":1}', [""]),
    ('{"flag":false}', ["flag"]),
    ('{"flag":null}', ["flag"]),
    ('{"other":1}', ["flag"]),
    ('{"predictions":[]}', ["predictions", "predictions.0"]),
    ('[{"a":1},{"a":2}]', ["#(a==2)", "#(a==2)#", "#.a", "@keys", "#(a>1)#|@keys"]),
    ('{"a":"10"}', ["[@this].#(a>5)"]),
    ('{"input":{"userId":1}}', ["{ .input.userId == 1 }"]),
    ('{"predictions":{"class":"cat"}}', ['{ .predictions.class == "dog" }']),
    ('{"instances":[{"a":1},{"a":5}]}', ["instances.#(a>9)#"]),
    ('{"x":1}', ["@this", "!true", "!false", "!null", "!0", '!"lit"', "!{}"]),
    # Where pygjson differed: modifiers, literals, escapes, #(...)# over an object.
    (
        '{"a":{"b":1,"c":[1,2]},"a\\\\":5,"k.e":{"y":2}}',
        [
            "a|@keys",
            "b|@keys",
            "a.@values",
            "a|@tostr",
            "a|@tostr|@fromstr",
            "[a,a.c]|@group",
            "a.c.@this",
            "a\\\\",
            "k\\.e.y",
            "#(b==1)#",
            "a.#(b==1)#",
            "@dig:b",
            "@dig:y",
            "a|@group",
            "{a.c}|@group",
        ],
    ),
    (
        '{"a":"x\\u00e9\\ud83d\\ude00\\n","b":"\\u00"}',
        ["a", "a|@tostr", "@this|@tostr", "b", "a|@fromstr", "[a]|@flatten"],
    ),
    # A modifier's plain argument ends at the first '|' outside brackets and strings.
    (
        '{"a":1}',
        [
            "@this:x[|]|a",
            '@this:x"|"|a',
            "@this:x{|}|a",
            "@this:x(|)|a",
            "@this:x\\||a",
            "@this:x]|a",
            "@this:x[|a",
            '@this:x"|a',
            "@this:x][|]|a",
            '@this:x"\\"|"|a',
        ],
    ),
    # An unterminated string inside an element stops the array scan before its end.
    ('[{"a":"\\"', ["#", "0", "#.a", "#(a)#", "..#"]),
    ('[1,{"b":"x', ["#", "1", "#.b", "#(b)#"]),
    # JSON lines ('..'), pipes after queries, @pretty options, sortKeys over mixed values.
    (
        '{"a":1}\n{"a":2}\n[3]\n"s"\n',
        ["..#.a", "..#(a>1)", "..#(a>1)#", "..1.a", "..#", "..3", "..@this", "..[0,1]", "..2.0"],
    ),
    (
        '{"a":[1,2,3],"b":{"c":[{"d":1},{"d":2}]}}',
        [
            "a.#(>1)",
            "a.#(>1)#",
            "b.c.#(d>1).d",
            "b.c.#.d|@reverse",
            "b.c|#.d",
            "b.c.#(d==1)|d",
            "a|@join",
            "{a.0,b.c.#.d}|@values",
            "[a.0,b]|@flatten|@keys",
            "a.#(>1)#|#",
            '@pretty:{"prefix":"--"}',
            '@ugly|@pretty:{"width":0}',
        ],
    ),
    (
        '{"b":2,"a":"x","c":{"z":1,"y":[3,1]},"a":1,"\\u0041":0,"a":null,"a":true,"a":[1]}',
        [
            '@pretty:{"sortKeys":true}',
            '@pretty:{"sortKeys":true,"indent":"    ","width":5}',
            "a",
            "@join",
            "[@this]|@join",
            '[@this]|@join:{"preserve":true}',
            "@keys",
            "@reverse",
        ],
    ),
    # A number or string literal swallows the rest of the path up to a closing bracket.
    (
        "{}",
        [
            "!-2.5.[[a],[b],[c],[d],[e],[f],[g],[h],[i]]",
            "!0.{[a],[b],[c],[d],[e],[f],[g],[h]}|x",
            '!"s".[[a],[b],[c],[d],[e],[f],[g],[h],[i]]',
        ],
    ),
    # Odd documents: Get does not validate.
    ('{"a":1,"b":', ["a", "b", "@this", "@valid"]),
    ('{"a":[1,2,', ["a.#", "a.1", "a.2"]),
    ('not json {"a":1}', ["a", "@this"]),
    ('{"a":NaN,"b":-Infinity,"c":nan,"d":+1}', ["a", "b", "c", "d", "[a,b,c,d]"]),
    ("  [1 , 2 ,3 ]  \n", ["#", "1", "@this", "@ugly", "@pretty", "@reverse"]),
    ("123", ["@this", "#", "0", "@keys", "@values", "@tostr"]),
    ('"str"', ["@this", "@fromstr", "@keys"]),
    ("", ["@this", "a", "!true"]),
    ('{"a":{"a":{"a":{"a":1}}}}', ["a.a.a.a", "a|a|a|a", "a.a.@pretty", "@dig:a"]),
    ('{"1":"one","a":["x","y"]}', ["1", "a.1", "a.01", "a.-1", "a.1a"]),
    (
        '{"a":[{"b":[{"c":1},{"c":2}]},{"b":[{"c":3}]}]}',
        ["a.#.b.#.c", "a.#.b|@flatten", "a.#(b.#(c==3))#", "a.#(b.#(c>0)#)#"],
    ),
    (
        '{"t":true,"f":false,"n":null,"arr":[true,false,null,0,"",[],{}]}',
        [
            "arr.#(==true)",
            "arr.#(==false)#",
            "arr.#(!=true)#",
            "arr.#(>false)#",
            "arr.#(~true)#",
            "arr.#(~false)#",
            "arr.#(~null)#",
            "arr.#(~*)#",
            "arr.#(<true)#",
            "arr.#(<=false)#",
            "arr.#(>=true)#",
        ],
    ),
]

INVALID_UTF8_DOCS: list[bytes] = [b'{"a":"\xff\xfe","b":1}', b'{"\xc3(":2}', b'["\xe2\x82"]']
INVALID_UTF8_PATHS: list[bytes] = [
    b"a",
    b"b",
    b"a|@tostr",
    b"@this|@tostr",
    b"*",
    b"#",
    b"0",
    b"@keys",
    b"[a,b]",
]

VALIDITY_DOCS: list[str] = [
    "",
    "null",
    "123",
    '"str"',
    " {} ",
    "[]",
    "{}\n",
    "{} x",
    "NaN",
    "[1,]",
    '{"a":Infinity}',
    "01",
    "-",
    "1.",
    "1e",
    "1e+",
    "-0",
    "0.5e-3",
    '"\\q"',
    '"\\u12"',
    '"\\u12zz"',
    '"a\tb"',
    "[1 2]",
    '{"a" 1}',
    '{"a":1,}',
    "tru",
    "true false",
    " \r\n\t1",
    "1\x0b",
    '{"a":[{"b":null}]}',
]


def record() -> list[dict[str, Any]]:
    """Ask the oracle for every hand-written case and return the vector list."""
    vectors: list[dict[str, Any]] = []

    def add(doc: bytes, paths: list[bytes]) -> None:
        valid, answers = ask(doc, paths)
        for path, (exists, raw) in zip(paths, answers, strict=True):
            vectors.append(
                {
                    "doc": doc.decode("utf-8", "surrogateescape"),
                    "path": path.decode("utf-8", "surrogateescape"),
                    "valid": valid,
                    "exists": exists,
                    "raw": raw.decode("utf-8", "surrogateescape"),
                }
            )

    for doc, paths in CASES:
        add(doc.encode(), [p.encode() for p in paths])
    for bdoc in INVALID_UTF8_DOCS:
        add(bdoc, INVALID_UTF8_PATHS)
    for vdoc in VALIDITY_DOCS:
        add(vdoc.encode(), [b"@this"])
    return vectors


if __name__ == "__main__":
    data = record()
    VECTORS.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(json.dumps(vector, ensure_ascii=True) for vector in data)
    VECTORS.write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    sys.stdout.write(f"{len(data)} vectors written to {VECTORS}\n")
