"""The pools the differential generator (generator.py) draws from: GJSON conditions, request bodies,
header patterns, Splitter weight vectors, step behaviours and their frequencies, instant-failure
targets, and the timing the generated Ensembles rely on. Data only."""

from __future__ import annotations

from typing import Final

STEP: Final = "@STEP@"
REFUSED: Final = "@REFUSED@"

# Ensemble answers are spaced this far apart: far more than the scheduling noise of a loaded
# 2-core machine (the brief's "e.g. 40 ms"), so the order of events is the order of indices.
GAP_MS: Final = 40
# The latest a single loopback call is assumed to take beyond its own delay, engine or oracle,
# on a loaded machine (generous: measured calls take 1-3 ms).
CALL_MS: Final = 15

# GJSON conditions: plain paths, queries with every operator, [@this] queries, #(...)# queries,
# modifiers, literals, multipaths, escapes, the empty condition and KServe's legacy forms.
CONDITIONS: Final = (
    "a",
    "a.b",
    "instances",
    "instances.0",
    "instances.#",
    "predictions",
    "predictions.0",
    "predictions.0.label",
    "missing",
    "flag",
    "loop",
    "decision",
    "",
    'instances.#(modelId=="2")',
    "instances.#(modelId==2)",
    'instances.#(modelId="1")',
    "instances.#(a!=5)",
    "instances.#(a>4)",
    "instances.#(a>=5)",
    "instances.#(a<5)",
    "instances.#(a<=5)",
    'instances.#(strval%"*red*")',
    'instances.#(strval!%"*red*")',
    "instances.#(a>9)#",
    "instances.#(a==5)#",
    'predictions.#(label=="dog")',
    'predictions.#(label=="cat")',
    "predictions.#(score>0.5)#.label",
    "[@this].#(decision==ERROR)",
    "[@this].#(decision==SUCCESS)",
    "[@this].#( decision == ERROR )",
    "[@this].#(a>5)",
    "[@this].#(a<5)",
    '[@this].#(a=="10")',
    "[@this].#(flag==true)",
    "[@this].#(flag==false)",
    "[@this].#(flag==~true)",
    "[@this].#(flag==~false)",
    "[@this].#(flag==~null)",
    "[@this].#(flag==~*)",
    '[@this].#(name%"d*")',
    '[@this].#(name!%"c*")',
    '[@this].#(predictions.0=="dog")',
    "[@this].#(instances.0.data>0.5 && instances.0.data<=0.9)",
    "#(a==2)",
    "#(a>1)#",
    "@this",
    "@keys",
    "@values",
    "@reverse",
    "@tostr",
    "@fromstr",
    "@valid",
    "@flatten",
    "a|@keys",
    "instances|@reverse|0",
    "s|@fromstr|x",
    "s|@fromstr|y",
    "@this|@tostr",
    '@keys|#(=="loop")',
    "!true",
    "!false",
    "!null",
    "{a,b}",
    "[a,missing]",
    "{missing}",
    "[missing]",
    "a\\.b",
    "fav\\ movie",
    "inst*",
    "inst?nces",
    "{ .input.userId == 1 }",
    '{ .predictions.class == "dog" }',
    "a && b",
    "a..b",
    "#",
    "0",
    "1.a",
)

REQUEST_BODIES: Final = (
    b'{"instances":[{"modelId":"2","a":5,"strval":"red-server"}],"a":1}',
    b'{"instances":[{"modelId":"1","a":9}],"predictions":["x"],"flag":false}',
    b'{"decision":"ERROR","key1":{"name":"abc"}}',
    b'{"decision":"SUCCESS","a":"10","name":"dog","flag":null}',
    b'{"predictions":[{"label":"dog","score":0.7},{"label":"cat","score":0.2}],"model_name":"m"}',
    b'{"predictions":["test","test2"],"instances":[1]}',
    b'{"a.b":1,"a":{"b":2},"fav movie":"x","s":"{\\"x\\":1}","instances":[{"data":0.3}]}',
    b'{"html":"<b>&</b>","big":12345678901234567890,"f":1.0,"e":1e21,"u":"\xc3\xa9\xe2\x80\xa8"}',
    b'{"loop":2,"a":1}',
    b'{"loop":3,"instances":[{"a":5}]}',
    b'[{"a":1},{"a":2}]',
    b'"text"',
    b"42",
    b"null",
    b"{}",
    b"[]",
    b' {"a" : 1}\n',
    b'{"a":',
    b"not json",
    b"",
    b'\xef\xbb\xbf{"a":1}',
)

# Comma-joined PROPAGATE_HEADERS values (router.headers.propagate): exact names, KServe's glob-ish
# regexes, an invalid one that is skipped, an anchored one, a lower-case one that matches nothing.
PROPAGATE_PATTERNS: Final = (
    "",
    "X-Request-Id",
    "X-Request-Id,Authorization",
    "Test-Header-*,Auth*",
    "Test-Header-[0-9,Auth*",
    "^Content-Type$,X-Lower",
    "authorization",
    ".*",
)

_CLIENT_HEADERS: Final = (
    ("X-Request-Id", "req-1"),
    ("Authorization", "Bearer token"),
    ("Test-Header-1", "v1"),
    ("Test-Header-2", "first"),
    ("Test-Header-2", "second"),
    ("x-lower-case", "low"),
    ("Content-Type", "application/json"),
    ("Content-Type", "text/plain"),
)

# Splitter weight vectors: sums of 100, below 100 (a "no route" share), above 100, zeros, 100 alone.
# Every non-zero share is >= 20 %, so two nested Splitters still reach each path >= 4 % of the time
# and the outcome-set comparison sees every reachable answer with a few hundred samples.
WEIGHTS: Final = (
    (100,),
    (0, 100),
    (100, 0),
    (50, 50),
    (30, 70),
    (40, 60),
    (20, 30),
    (60, 60),
    (0, 0),
    (30, 30, 40),
    (50, 20, 30),
)

# Behaviours (tests/engine/differential/stepserver.py) and how often generated steps use them.
_BEHAVIOURS: Final = (
    ("obj", 8),
    ("obj2", 6),
    ("ws", 3),
    ("tricky", 3),
    ("dupkeys", 1),
    ("preds", 4),
    ("preds-str", 2),
    ("preds-empty", 2),
    ("arr", 2),
    ("str", 2),
    ("num", 2),
    ("null", 2),
    ("empty", 2),
    ("invalid", 2),
    ("bom", 2),
    ("html", 1),
    ("text", 1),
    ("binary", 1),
    ("s201", 2),
    ("s204", 2),
    ("s400", 2),
    ("s404", 3),
    ("s404-text", 1),
    ("s500", 2),
    ("s500-html", 1),
    ("s503", 1),
    ("s503-null", 1),
    ("echo", 8),
    ("echo-404", 2),
    ("headers", 3),
    ("identity", 1),
    ("countdown", 2),
    ("redirect-307", 1),
    ("redirect-302", 1),
    ("redirect-obj", 1),
    ("close", 1),
)
# Targets that fail at once, before any answer: only allowed where timing cannot matter.
_INSTANT: Final = (
    f"http://{REFUSED}/",
    "http://single-1.default.{$your-domain}/switch",
    "http://127.0.0.1:99999/",
    "ftp://127.0.0.1/x",
    "127.0.0.1:8080/x",
    "http:///nohost",
    f"http://{STEP}/b/obj with space",
)
_NODE_NAMES: Final = ("n1", "node-b", "sw", "ens", "split", "seq-2", "x")
_ROUTERS: Final = ("Sequence", "Switch", "Ensemble", "Splitter")
