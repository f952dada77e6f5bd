"""Graphs that show what changed between KServe releases, and what each release's router answered.

Each probe is a graph (``${SERVER}`` stands for a loopback step server), a ``PROPAGATE_HEADERS``
value and requests (method, path, headers, body). ``python -m tests.engine.release_probes`` starts
every release's build (``../shared/oracle/releases/<tag>/kserve-router``, master at
``../shared/oracle/kserve-router``) on every probe and rewrites ``data/oracle_releases.json``:
the recorded answers that ``test_engine_releases.py`` checks the engine against, everywhere.
An answer is status, Content-Type and body; ``null`` status means the router closed the
connection without answering (it crashed on that request).
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from graphs.language.releases import RELEASES, Release
from tests.engine.differential.harness import ORACLE_DIR, Oracle, oracle_binary

DATA: Final = Path(__file__).resolve().parent / "data" / "oracle_releases.json"

_STEPSERVER = Path(__file__).resolve().parent.parent / "stepserver.py"
if "stepserver" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("stepserver", _STEPSERVER)
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["stepserver"] = _module
    _spec.loader.exec_module(_module)

from stepserver import Dynamic, Recorded, Reply, StepServer  # noqa: E402


def _echo(rec: Recorded) -> Reply:
    """The request as the step saw it: its body and the headers a router may have added."""
    seen = {name: rec.header(name) for name in ("X-Request-Id", "Content-Type", "Test-Header")}
    return Reply(json={"body": rec.body.decode("utf-8", "replace"), "headers": seen})


def routes(server: StepServer) -> None:
    """The step server's behaviours the probes call."""
    server.route("/echo", Dynamic(_echo))
    server.route("/a", Reply(json={"a": 1}))
    server.route("/slow", Reply(json={"slow": True}, delay=1.5))
    for name in ("m1", "m2", "m3"):
        server.route(f"/{name}", Reply(json={"route": name}))


def _sequence(*steps: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"nodes": {"root": {"routerType": "Sequence", "steps": list(steps)}}, **spec}


_JSON: Final = [["Content-Type", "application/json"]]

PROBES: Final[dict[str, dict[str, Any]]] = {
    "header-patterns": {
        "note": "v0.11 reads PROPAGATE_HEADERS as exact names and always adds Content-Type",
        "spec": _sequence({"serviceUrl": "${SERVER}/echo"}),
        "propagate": "X-Req.*,Test-Header,Content-Type",
        "requests": [
            {"body": '{"x":1}', "headers": [["X-Request-Id", "r1"], ["Test-Header", "t"], *_JSON]},
            {"body": '{"x":1}', "headers": [["x-request-id", "r2"]]},
        ],
    },
    "unmet-condition": {
        "note": "an unmet Sequence condition answers 500 up to v0.15.0, 200 from v0.15.1",
        "spec": _sequence({"serviceUrl": "${SERVER}/a"}, {"serviceUrl": "${SERVER}/m1", "condition": "b"}),
        "requests": [{"body": "{}"}],
    },
    "map-predictions": {
        "note": "mapPredictionsToInstances arrived in v0.16; before, the field is ignored",
        "spec": _sequence({"serviceUrl": "${SERVER}/echo", "mapPredictionsToInstances": True}),
        "requests": [{"body": '{"predictions":[1,2],"other":3}'}],
    },
    "service-client-timeout": {
        "note": "routerTimeouts.serviceClient arrived in v0.16",
        "spec": _sequence({"serviceUrl": "${SERVER}/slow"}, routerTimeouts={"serviceClient": 1}),
        "requests": [{"body": "{}"}],
    },
    "bad-url": {
        "note": "v0.11 panics on a step URL that does not parse; later releases answer 500",
        "spec": _sequence({"serviceUrl": "http://a b/"}),
        "requests": [{"body": "{}"}],
    },
    "readyz": {
        "note": "GET /readyz runs the graph before v0.15",
        "spec": _sequence({"serviceUrl": "${SERVER}/a"}),
        "requests": [{"method": "GET", "path": "/readyz", "body": ""}],
    },
    "gjson-tilde-and-dig": {
        "note": "gjson v1.14.4 (v0.11): ~ reads Result.Bool(), no @dig",
        "spec": {
            "nodes": {
                "root": {
                    "routerType": "Switch",
                    "steps": [
                        {"serviceUrl": "${SERVER}/m1", "condition": "[@this].#(flag==~null)"},
                        {"serviceUrl": "${SERVER}/m2", "condition": "@dig:deep"},
                        {"serviceUrl": "${SERVER}/m3", "condition": "@this"},
                    ],
                }
            }
        },
        "requests": [
            {"body": '{"flag":null}'},
            {"body": '{"flag":"yes","x":{"deep":1}}'},
            {"body": '{"flag":1}'},
        ],
    },
    "splitter-no-route": {
        "note": "weights summing to 0: no route; a crash before v0.19, a 500 after",
        "spec": {
            "nodes": {
                "root": {"routerType": "Splitter", "steps": [{"serviceUrl": "${SERVER}/a", "weight": 0}]}
            }
        },
        "requests": [{"body": "{}"}],
    },
}


def materialize(value: Any, base: str) -> Any:
    return json.loads(json.dumps(value).replace("${SERVER}", base))


def ask(port: int, request: dict[str, Any], base: str) -> dict[str, Any]:
    """Send one probe request; the answer with the step server's address put back as ``${SERVER}``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    body = request["body"].encode()
    try:
        conn.putrequest(request.get("method", "POST"), request.get("path", "/"), skip_accept_encoding=True)
        for name, value in request.get("headers", []):
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        text = response.read().decode("utf-8", "backslashreplace").replace(base, "${SERVER}")
        return {"status": response.status, "content_type": response.getheader("Content-Type"), "body": text}
    except (http.client.HTTPException, ConnectionError):
        return {"status": None, "content_type": None, "body": ""}
    finally:
        conn.close()


@contextmanager
def oracle_for(release: Release, spec: dict[str, Any], propagate: str) -> Iterator[int]:
    """``release``'s router build serving ``spec`` on a loopback port."""
    router = Oracle(oracle_binary(release), spec, propagate, readyz=release.readyz)
    router.start()
    try:
        yield router.port
    finally:
        router.stop()


def record(releases: tuple[Release, ...] = RELEASES) -> dict[str, Any]:
    """Every release's answers to every probe: ``{release: {probe: [answer, ...]}}``."""
    out: dict[str, Any] = {}
    with StepServer() as server:
        routes(server)
        base = server.url("").rstrip("/")
        for release in releases:
            answers: dict[str, Any] = {}
            for name, probe in PROBES.items():
                with oracle_for(
                    release, materialize(probe["spec"], base), probe.get("propagate", "")
                ) as port:
                    answers[name] = [ask(port, request, base) for request in probe["requests"]]
            out[release.name] = answers
    return out


def main() -> int:
    if not ORACLE_DIR.exists():
        print(f"no oracle at {ORACLE_DIR}", file=sys.stderr)
        return 2
    DATA.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
