"""A test suite judged on KServe's own router: the cases, and what ``kserve-router`` answered.

``python tests/graphtests/oracle_suite.py`` runs every case of :data:`SUITE` through
``../shared/oracle/kserve-router`` (steps served by a loopback step server) and rewrites
``data/oracle_suite.json`` with each case's status and body; the tests judge the same cases on the
studio's engine and on those answers and require the same verdict for every expectation.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).resolve().parent / "data" / "oracle_suite.json"

if "oraclekit" not in sys.modules:  # tests/engine's oracle harness, loaded by path
    _spec = importlib.util.spec_from_file_location("oraclekit", ROOT / "tests" / "engine" / "oraclekit.py")
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["oraclekit"] = _module
    _spec.loader.exec_module(_module)

from oraclekit import OracleRouter, oracle_available  # noqa: E402

__all__ = ["CAT", "DOG", "GRAPH", "SUITE", "oracle_answers", "oracle_available", "serve_steps"]

CAT = {"says": "meow", "score": 0.93, "tags": ["small", "furry"]}
DOG = {"error": "busy"}

GRAPH = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: pets
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - name: classify
        serviceUrl: {url}/classify
      - name: pick
        nodeName: pets
        data: $response
    pets:
      routerType: Switch
      steps:
      - name: cat
        serviceUrl: {url}/cat
        condition: '[@this].#(animal=="cat")'
      - name: dog
        serviceUrl: {url}/dog
        condition: '[@this].#(animal=="dog")'
      - name: both
        nodeName: both
        condition: '[@this].#(animal=="both")'
    both:
      routerType: Ensemble
      steps:
      - name: a
        serviceUrl: {url}/cat
      - name: b
        serviceUrl: {url}/dog
"""

# Status, body and path expectations only: the oracle has no trace, so route, step and latency
# expectations are the engine's alone.
SUITE = """\
kind: InferenceGraphTest
graph: pets
cases:
- name: cat
  request: {payload: {animal: cat}}
  expectations:
  - status: 200
  - {body: {says: meow, score: 0.93, tags: [small, furry]}}
  - {path: tags.#, equals: 2}
  - {path: score, approx: 0.9, tolerance: 0.05}
  - {path: says, matches: "^m"}
  - status: 503
- name: dog answers 503
  request: {payload: {animal: dog}}
  expectations:
  - status: 503
  - {body: {error: busy}, match: subset}
  - {path: error, not_equals: busy}
- name: ensemble
  request: {payload: {animal: both}}
  expectations:
  - status: 200
  - {path: a.says, equals: meow}
  - {path: b.error, equals: busy}
  - {path: "@this", contains: {b: {error: busy}}}
  - {body: {a: {says: meow}}, match: subset}
- name: no route
  request: {payload: {animal: fish}}
  expectations:
  - status: 404
  - status: 500
  - {path: error, equals: Failed to process request}
  - {path: cause, contains: switch condition}
- name: not json
  request: {raw: "not json", content_type: text/plain}
  expectations:
  - status: 500
  - {path: cause, exists: true}
  - {path: cause, matches: "(?i)none of the routes"}
- name: empty array
  request: {payload: []}
  expectations:
  - {path: "@this", equals: []}
  - status: 200
"""


def serve_steps(server: Any) -> None:
    from stepserver import Echo, Reply

    server.route("/classify", Echo())
    server.route("/cat", Reply(json=CAT))
    server.route("/dog", Reply(status=503, json=DOG))


def oracle_answers(server: Any) -> dict[str, dict[str, Any]]:
    """Each case's ``{"status", "body"}`` from KServe's router (steps on ``server``)."""
    from execution.casecore import load_suite
    from graphs import language

    manifest = language.parse(GRAPH.format(url=server.url("").rstrip("/")))
    graph = json.loads(json.dumps(manifest.document["spec"]))
    answers: dict[str, dict[str, Any]] = {}
    with OracleRouter(graph) as router:
        for case in load_suite(SUITE).cases:
            status, _, body = router.post(case.request.body, list(case.request.headers))
            answers[case.name] = {"status": status, "body": body.decode()}
    return answers


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    from stepserver import StepServer

    with StepServer() as step_server:
        serve_steps(step_server)
        RECORD.write_text(json.dumps(oracle_answers(step_server), indent=1) + "\n")
    print(f"wrote {RECORD}")
