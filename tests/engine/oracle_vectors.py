"""The questions put to KServe's router (the oracle) about outbound calls, and how to record them.

The families, each answered by ``../shared/oracle/kserve-router`` (Go 1.19's regexp and
net/http) with loopback step servers that record exactly what they receive:

- ``PATTERNS``: one ``PROPAGATE_HEADERS`` value each (split on ``,`` by the router), sent with the
  same set of header ``NAMES``; the answer is which names reached the step (an invalid pattern is
  skipped by the router, so it propagates nothing).
- ``HEADER_CASES``: client headers and patterns; the answer is every header line the step
  received, in order (values of one name keep their order).
- ``REDIRECT_CASES``: a step that redirects; the answer is the router's status and body and every
  request each step server received (method, path, headers, body).
- ``RACE_CASES``: an Ensemble whose steps answer at the same instant, asked many times; the answer
  is how often each outcome came (Go's scheduler and ``select`` choose).

``python tests/engine/oracle_vectors.py`` asks the oracle and rewrites ``tests/engine/data/*.json``;
the tests compare the engine with those files (and, where the oracle exists, the files with it).
Server ports are written as ``{A}`` / ``{B}`` so the files do not depend on the ports used.
"""

from __future__ import annotations

import base64
import gzip
import json
import sys
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE.parent))  # tests/stepserver.py, when run as a script
sys.path.insert(0, str(HERE))

from oraclekit import OracleRouter  # noqa: E402
from stepserver import Dynamic, Recorded, Reply, StepServer  # noqa: E402

# Header names sent with every pattern question: what header patterns are written for, plus
# names that tell Go's regexp from Python's (underscores, digits, case).
NAMES = [
    "Authorization",
    "X-Request-Id",
    "X-B3-Traceid",
    "Test-Header-1",
    "Test-Header-Key",
    "X-Custom_name",
    "X-9",
    "Abc",
    "Id",
    "X-Trace-Id",
    "Cookie",
]

PATTERNS = [
    "",
    "Authorization,",
    ",",
    "Auth*",
    "authorization",
    "^Authorization$",
    "(?i)authorization",
    "Test-Header-*",
    "Test-Header-[0-9",
    "*Trace-Id*",
    "(?!X)Abc",
    "(?<=X-)Request",
    "(Id)\\1",
    "(?P<n>Auth)",
    "(?<n>Auth)",
    "(?P=n)",
    "[[:alpha:]]+-[[:digit:]]",
    "[[:word:]]+_",
    "^\\pL+$",
    "\\PL\\d",
    "\\p{Lu}d$",
    "\\p{Greek}",
    "Id\\z",
    "Id\\Z",
    "\\AId",
    "(?U)X-.+",
    "\\QX-Request\\E",
    "\\C",
    "[\\C]",
    "\\Q\\C\\E",
    "Id{1001}",
    "I{1000}",
    "(I{1000}){1000}",
    "(?:(?:I{100}){100}){100}",
    "x**",
    "Auth++",
    "Auth*?",
    "(?x)A u t h",
    "\\e",
    "\\v",
    "\\0",
    "\\8",
    "(?#comment)",
    "[[=a=]]",
    "\\K",
    "\\G",
    "\\N{DIGIT NINE}",
    "\\x{58}-\\d",
    "\\bId\\b",
    "[^-]+$",
    "\\w+_\\w+",
    "(?i:X-REQUEST)",
    "(?s).",
    "(?m)^X",
    "[a-\\d]",
    "[z-a]",
    "\\X",
    "\\R",
    "(?|a)",
    "(?>Auth)",
    "(?i)ʞ",
    "\\h",
    "[[:^alpha:]]",
    "(",
    ")",
    "\\",
    "[[:foo:]]",
    "(?P<>a)",
    "(?P<a>x)(?P<a>y)",
    "(?i",
    "a|*",
    "[]",
    "\\p{Foo}",
    "x{2,1}",
    "\\pL{1000}",
    "(" * 1001 + "I" + ")" * 1001,
    "(" * 999 + "I" + ")" * 999,
    "(" * 1000 + "I" + ")" * 1000,
    "(?:" * 300 + "I" + ")" * 300,
]
# Where the engine knowingly answers differently (headers.py "Deliberate deviation"): RE2's
# program-size budget refuses what Go's regexp accepts.
PATTERN_DEVIATIONS = frozenset({"\\pL{1000}"})

# The client's headers for HEADER_CASES: (PROPAGATE_HEADERS or None, [(name, value), ...]).
HEADER_CASES: dict[str, tuple[str | None, list[tuple[str, str]]]] = {
    "unset": (None, [("Authorization", "Bearer t"), ("X-Request-Id", "1")]),
    "everything": (
        ".",
        [
            ("X-Multi", "1"),
            ("x-multi", "2"),
            ("X-MULTI", "3"),
            ("User-Agent", "client/1"),
            ("Accept", "*/*"),
            ("Cookie", "a=1"),
            ("Connection", "keep-alive"),
            ("Te", "trailers"),
            ("Keep-Alive", "timeout=5"),
            ("Proxy-Connection", "keep-alive"),
            ("Trailer", "X-T"),
            ("Referer", "http://client.example/"),
            ("X-Empty", ""),
        ],
    ),
    "trailing-comma-matches-all": ("X-Request-Id,", [("X-Request-Id", "1"), ("X-Other", "2")]),
    "content-type-propagated": ("Content-Type", [("Content-Type", "text/plain; charset=utf-8")]),
    "content-type-empty": ("Content-Type", [("Content-Type", "")]),
    "content-type-not-propagated": ("X-A", [("Content-Type", "text/plain"), ("X-A", "1")]),
    "user-agent-two-values": ("User-Agent", [("User-Agent", "first/1"), ("User-Agent", "second/2")]),
    "user-agent-empty": ("User-Agent", [("User-Agent", "")]),
    "accept-encoding-propagated": ("Accept-Encoding", [("Accept-Encoding", "br")]),
    "accept-encoding-empty": ("Accept-Encoding", [("Accept-Encoding", "")]),
    "range-propagated": ("Range", [("Range", "bytes=0-10")]),
    "host-and-length-never": (".", [("X-A", "1")]),
    "two-patterns-one-header": ("X-A,X-", [("X-A", "1"), ("X-A", "2")]),
}

# The steps the router calls: what server A answers at each path (a redirect or the echo).
# ``{A}``/``{B}`` in a Location are the two servers' ports; "echo" answers the request back.
RedirectRoutes = dict[str, tuple[int, str | None] | str]
REDIRECT_CASES: dict[str, dict[str, Any]] = {
    "302-relative": {"routes": {"/start": (302, "/final")}},
    "301-absolute": {"routes": {"/start": (301, "http://127.0.0.1:{A}/final")}},
    "303": {"routes": {"/start": (303, "/final")}},
    "307-keeps-body": {"routes": {"/start": (307, "/final")}},
    "308-keeps-body": {"routes": {"/start": (308, "/final")}},
    "307-empty-body": {"routes": {"/start": (307, "/final")}, "body": ""},
    "302-no-location": {"routes": {"/start": (302, None)}},
    "300-is-an-answer": {"routes": {"/start": (300, "/final")}},
    "304-is-an-answer": {"routes": {"/start": (304, "/final")}},
    "305-is-an-answer": {"routes": {"/start": (305, "/final")}},
    "9-hops-then-answer": {
        "routes": {**{f"/r{i}": (302, f"/r{i + 1}") for i in range(9)}, "/r9": "echo"},
        "start": "/r0",
    },
    "10-hops-stop": {"routes": {f"/r{i}": (302, f"/r{i + 1}") for i in range(12)}, "start": "/r0"},
    "loop-stop": {"routes": {"/start": (302, "/start")}},
    "other-port-drops-credentials": {
        "routes": {"/start": (302, "http://127.0.0.1:{B}/final")},
        "propagate": "Authorization,Cookie,Cookie2,Www-Authenticate,X-Keep",
    },
    "other-host-drops-credentials": {
        "routes": {"/start": (307, "http://localhost:{A}/final")},
        "propagate": "Authorization,Cookie,Cookie2,Www-Authenticate,X-Keep",
    },
    "back-to-first-host-restores-credentials": {
        "routes": {"/start": (302, "http://127.0.0.1:{B}/bounce")},
        "routes_b": {"/bounce": (302, "http://127.0.0.1:{A}/final")},
        "propagate": "Authorization,X-Keep",
    },
    "other-host-then-same-host-copies-credentials-again": {
        "routes_b": {"/x": (302, "/final")},
        "routes": {"/start": (302, "http://127.0.0.1:{B}/x")},
        "propagate": "Authorization,X-Keep",
    },
    "same-host-keeps-credentials": {
        "routes": {"/start": (302, "/final")},
        "propagate": "Authorization,Cookie,X-Keep",
    },
    "propagated-referer-is-replaced": {
        "routes": {"/start": (302, "/final")},
        "propagate": "Referer",
        "headers": [("Referer", "http://client.example/")],
    },
    "relative-dot-segments-and-query": {
        "routes": {"/a/b/start": (302, "../c/./final?x=1&y=%20")},
        "start": "/a/b/start",
    },
    "query-only": {"routes": {"/start": (302, "?q=1")}},
    "network-path": {"routes": {"/start": (302, "//127.0.0.1:{B}/final")}},
    "bad-location-host": {"routes": {"/start": (302, "http://a b/")}},
    "bad-location-ipv6": {"routes": {"/start": (302, "http://[::1/")}},
    "bad-location-scheme": {"routes": {"/start": (302, ":foo")}},
    "bad-location-port": {"routes": {"/start": (302, "http://127.0.0.1:x/")}},
    "unsupported-scheme": {"routes": {"/start": (302, "ftp://127.0.0.1/x")}},
    "refused-at-second-hop": {"routes": {"/start": (302, "http://127.0.0.1:1/final")}},
    "307-then-303": {
        "routes": {"/start": (307, "/middle"), "/middle": (303, "/final")},
    },
    # A step URL with user info: Go's client sends ``Authorization: Basic`` built from the
    # percent-decoded user and password, on every hop whose URL has user info, unless the request
    # already has a non-empty first Authorization value.
    "userinfo": {"userinfo": "user:pw", "routes": {"/start": "echo"}, "propagate": "X-Keep"},
    "userinfo percent-decoded": {
        "userinfo": "us%65r%3A:p%40ss%2F%3Aw%C3%A9%FF",
        "routes": {"/start": "echo"},
        "propagate": "X-Keep",
    },
    "userinfo sub-delimiters": {"userinfo": "a!$&'()*+,;=b:c!$&'()*+,;=:d", "routes": {"/start": "echo"}},
    "userinfo user only": {"userinfo": "user", "routes": {"/start": "echo"}},
    "userinfo password only": {"userinfo": ":pw", "routes": {"/start": "echo"}},
    "userinfo empty": {"userinfo": "", "routes": {"/start": "echo"}},
    "userinfo and a propagated Authorization": {
        "userinfo": "user:pw",
        "routes": {"/start": "echo"},
        "propagate": "Authorization,X-Keep",
    },
    "userinfo and an empty propagated Authorization": {
        "userinfo": "user:pw",
        "routes": {"/start": "echo"},
        "propagate": "Authorization",
        "headers": [("Authorization", ""), ("X-Keep", "kept")],
    },
    "userinfo and an empty first of two Authorization values": {
        "userinfo": "user:pw",
        "routes": {"/start": "echo"},
        "propagate": "Authorization",
        "headers": [("Authorization", ""), ("Authorization", "Bearer second")],
    },
    "userinfo and Authorization not propagated": {
        "userinfo": "user:pw",
        "routes": {"/start": "echo"},
        "propagate": "X-Keep",
    },
    "userinfo kept by a relative redirect": {
        "userinfo": "user:pw",
        "routes": {"/start": (302, "/final")},
        "propagate": "X-Keep",
    },
    "userinfo lost on a redirect to another host": {
        "userinfo": "user:pw",
        "routes": {"/start": (307, "http://127.0.0.1:{B}/final")},
        "propagate": "Authorization,X-Keep",
    },
    "userinfo of the redirect target": {
        "routes": {"/start": (307, "http://other:x%20y@127.0.0.1:{A}/final")},
        "propagate": "X-Keep",
    },
    "userinfo of the redirect target after a propagated Authorization": {
        "userinfo": "user:pw",
        "routes": {"/start": (307, "http://other:x@127.0.0.1:{A}/final")},
        "propagate": "Authorization,X-Keep",
    },
    "userinfo changed by the redirect to another host": {
        "userinfo": "user:pw",
        "routes": {"/start": (302, "http://other:x@127.0.0.1:{B}/final")},
        "propagate": "Authorization,X-Keep",
    },
}
# A step answering with a Content-Encoding: (encoding label, body bytes, PROPAGATE_HEADERS, client
# headers). Go decodes gzip only when it asked for it itself (no Accept-Encoding propagated).
_JSON = b'{"predictions":[1,2,3]}'
ENCODING_CASES: dict[str, tuple[str, bytes, str | None, list[tuple[str, str]]]] = {
    "gzip-decoded": ("gzip", gzip.compress(_JSON, mtime=0), None, []),
    "gzip-label-in-capitals": ("GZIP", gzip.compress(_JSON, mtime=0), None, []),
    "gzip-kept-when-client-asked": (
        "gzip",
        gzip.compress(_JSON, mtime=0),
        "Accept-Encoding",
        [("Accept-Encoding", "gzip")],
    ),
    "deflate-passes-through": ("deflate", zlib.compress(_JSON), None, []),
    "br-label-passes-through": ("br", _JSON, None, []),
    "gzip-label-plain-body": ("gzip", _JSON, None, []),
    "gzip-truncated": ("gzip", gzip.compress(_JSON * 50, mtime=0)[:40], None, []),
    "gzip-empty-body": ("gzip", b"", None, []),
}
# Ensembles whose answer Go leaves to chance: the steps in ``together`` answer at the same instant
# (after the first step's answer was taken), so which of them Go's receiving loop takes first is
# decided by its scheduler and its ``select``. ``answers``: path -> (status, body). Each case is
# asked ``RACE_REQUESTS`` times; what is recorded is how often each outcome came.
RACE_REQUESTS = 400
RACE_CASES: dict[str, dict[str, Any]] = {
    "a Hard failure and an error together": {
        "steps": [
            {"name": "a", "path": "/ok"},
            {"name": "h", "path": "/hard", "dependency": "Hard"},
            {"name": "e", "path": "/bad"},
        ],
        "answers": {"/ok": (200, b'{"ok":1}'), "/hard": (502, b'{"error":"hard"}'), "/bad": (200, b"[1]")},
        "together": ["/hard", "/bad"],
    },
    "two errors together": {
        "steps": [
            {"name": "a", "path": "/ok"},
            {"name": "e1", "path": "/bad"},
            {"name": "e2", "path": "/text"},
        ],
        "answers": {"/ok": (200, b'{"ok":1}'), "/bad": (200, b"[1]"), "/text": (404, b"Not Found")},
        "together": ["/bad", "/text"],
    },
}
# How long the steps in ``together`` wait once both have been called (the first step answers first).
RACE_HOLD = 0.03


DEFAULT_CLIENT_HEADERS = [
    ("Authorization", "Bearer secret"),
    ("Cookie", "session=1"),
    ("Cookie2", "v=1"),
    ("Www-Authenticate", "Basic"),
    ("X-Keep", "kept"),
]


def echo(rec: Recorded) -> Reply:
    """The final step: answers with what it got (method, path, body), not the headers."""
    return Reply(json={"method": rec.method, "path": rec.path, "body": rec.body.decode("utf-8", "replace")})


def headers_echo(rec: Recorded) -> Reply:
    return Reply(json={"ok": True})


def received(server: StepServer) -> list[dict[str, Any]]:
    return [
        {
            "method": r.method,
            "path": r.path,
            "headers": [list(h) for h in r.headers],
            "body": r.body.decode("utf-8", "replace"),
        }
        for r in server.received()
    ]


def normalise(value: Any, ports: dict[str, int]) -> Any:
    """``value`` with each server's port written as its placeholder (``{A}``)."""
    text = json.dumps(value)
    for name, port in ports.items():
        text = text.replace(f":{port}", f":{{{name}}}")
    return json.loads(text)


def install(server: StepServer, routes: RedirectRoutes, ports: dict[str, int]) -> None:
    server.routes.clear()
    server.default = Dynamic(echo)
    for path, answer in routes.items():
        if answer == "echo":
            server.route(path, Dynamic(echo))
            continue
        assert isinstance(answer, tuple)
        status, location = answer
        headers = {} if location is None else {"Location": location.format(**ports)}
        body = b"" if status == 304 else b"redirect body"  # a 304 has no body (RFC 9110)
        server.route(path, Reply(status=status, body=body, content_type="text/plain", headers=headers))


# --- asking the oracle ---------------------------------------------------------------------------


def one_step(url: str) -> dict[str, Any]:
    return {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": url}]}}}


def ask_patterns() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with StepServer() as server:
        server.default = Dynamic(headers_echo)
        for pattern in PATTERNS:
            server.reset()
            router = OracleRouter(one_step(server.url("/")), propagate=pattern, log=True)
            with router:
                status, _, _ = router.post(b"{}", [(name, "v") for name in NAMES])
            assert status == 200, (pattern, status)
            got = {name for name, _ in server.received()[0].headers}
            errors = [line for line in router.log().splitlines() if "Failed to compile" in line]
            out[pattern] = {
                "valid": not errors,
                "error": _go_error(errors[0]) if errors else None,
                "propagated": [name for name in NAMES if name in got],
            }
    return out


def _go_error(line: str) -> str:
    """The error text of the router's "Failed to compile" log line (logr's quoted value)."""
    start = line.index('"error"=') + len('"error"=')
    return str(json.loads(line[start:]))


def ask_headers() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with StepServer() as server:
        server.default = Dynamic(headers_echo)
        for case, (propagate, headers) in HEADER_CASES.items():
            server.reset()
            with OracleRouter(one_step(server.url("/")), propagate=propagate) as router:
                status, _, _ = router.post(b'{"a":1}', headers)
            out[case] = normalise({"status": status, "received": received(server)}, {"A": server.port})
    return out


def ask_redirects() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with StepServer() as a, StepServer() as b:
        ports = {"A": a.port, "B": b.port}
        for case, spec in REDIRECT_CASES.items():
            out[case] = redirect_answer(spec, a, b, ports, oracle_call(spec, a))
    return out


def start_url(spec: dict[str, Any], a: StepServer) -> str:
    """The step's URL: server A at the case's start path, with the case's user info if any."""
    url = a.url(spec.get("start", "/start"))
    if "userinfo" in spec:
        scheme, _, rest = url.partition("://")
        url = f"{scheme}://{spec['userinfo']}@{rest}"
    return url


def oracle_call(spec: dict[str, Any], a: StepServer) -> Callable[[], tuple[int, bytes]]:
    def call() -> tuple[int, bytes]:
        url = start_url(spec, a)
        with OracleRouter(one_step(url), propagate=spec.get("propagate")) as router:
            status, _, body = router.post(spec.get("body", '{"x":1}').encode(), spec_headers(spec))
        return status, body

    return call


def spec_headers(spec: dict[str, Any]) -> list[tuple[str, str]]:
    return [tuple(h) for h in spec.get("headers", DEFAULT_CLIENT_HEADERS)]  # type: ignore[misc]


def redirect_answer(
    spec: dict[str, Any],
    a: StepServer,
    b: StepServer,
    ports: dict[str, int],
    call: Callable[[], tuple[int, bytes]],
) -> dict[str, Any]:
    """Install the case's routes, make the call, and describe what happened (ports normalised)."""
    install(a, spec["routes"], ports)
    install(b, spec.get("routes_b", {}), ports)
    a.reset()
    b.reset()
    status, body = call()
    return normalise(
        {"status": status, "body": body.decode("utf-8", "replace"), "a": received(a), "b": received(b)}, ports
    )


def encoded_reply(case: str) -> Reply:
    label, body, _, _ = ENCODING_CASES[case]
    return Reply(body=body, content_type="application/json", headers={"Content-Encoding": label})


def encoding_answer(status: int, body: bytes) -> dict[str, Any]:
    return {"status": status, "body_base64": base64.b64encode(body).decode()}


def ask_encodings() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with StepServer() as server:
        for case, (_, _, propagate, headers) in ENCODING_CASES.items():
            server.route("/", encoded_reply(case))
            with OracleRouter(one_step(server.url("/")), propagate=propagate) as router:
                status, _, body = router.post(b"{}", headers)
            out[case] = encoding_answer(status, body)
    return out


def race_spec(case: str, url: Callable[[str], str]) -> dict[str, Any]:
    """The case's root Ensemble, each step's ``serviceUrl`` made by ``url(path)``."""
    steps = []
    for step in RACE_CASES[case]["steps"]:
        doc = {"name": step["name"], "serviceUrl": url(step["path"])}
        if "dependency" in step:
            doc["dependency"] = step["dependency"]
        steps.append(doc)
    return {"nodes": {"root": {"routerType": "Ensemble", "steps": steps}}}


def race_outcome(status: int, body: bytes) -> str:
    """An answer as a race counts it: the status and the error's cause, or the body."""
    if status == 500:
        return f"500 {json.loads(body)['cause']}"
    return f"{status} {body.decode('utf-8', 'replace')}"


def install_race(server: StepServer, case: str) -> None:
    """The case's answers on ``server``; the ``together`` steps wait for each other, then answer
    ``RACE_HOLD`` seconds later at the same instant."""
    spec = RACE_CASES[case]
    barrier = threading.Barrier(len(spec["together"]))
    server.routes.clear()
    for path, (status, body) in spec["answers"].items():
        reply = Reply(status=status, body=body, content_type="application/json")
        if path in spec["together"]:

            def held(_rec: Recorded, reply: Reply = reply) -> Reply:
                barrier.wait(timeout=10)
                time.sleep(RACE_HOLD)
                return reply

            server.route(path, Dynamic(held))
        else:
            server.route(path, reply)


def ask_races(requests: int = RACE_REQUESTS) -> dict[str, Any]:
    out: dict[str, Any] = {"requests": requests, "cases": {}}
    with StepServer() as server:
        for case in RACE_CASES:
            install_race(server, case)
            counts: dict[str, int] = {}
            with OracleRouter(race_spec(case, server.url)) as router:
                for _ in range(requests):
                    status, _, body = router.post(b"{}", [])
                    key = race_outcome(status, body)
                    counts[key] = counts.get(key, 0) + 1
            out["cases"][case] = dict(sorted(counts.items()))
    return out


def main() -> None:
    DATA.mkdir(exist_ok=True)
    answers = {"names": NAMES, "patterns": ask_patterns()}
    (DATA / "oracle_patterns.json").write_text(json.dumps(answers, indent=1, ensure_ascii=False) + "\n")
    (DATA / "oracle_headers.json").write_text(json.dumps(ask_headers(), indent=1) + "\n")
    (DATA / "oracle_redirects.json").write_text(json.dumps(ask_redirects(), indent=1) + "\n")
    (DATA / "oracle_encodings.json").write_text(json.dumps(ask_encodings(), indent=1) + "\n")
    (DATA / "oracle_races.json").write_text(json.dumps(ask_races(), indent=1) + "\n")


if __name__ == "__main__":
    main()
