"""A case written from a finished run (status, body as a subset, the routes taken) passes when the
same request runs again, and fails when the graph changes its route."""

from __future__ import annotations

import asyncio
import random

import httpx
from casekit import answer, echo

from execution.casecore import case_document_from_run, evaluate_case, observed_from_result, parse_case
from execution.engine import EngineConfig, GraphResult, run_graph
from graphs import language

GRAPH = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: g
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - {name: classify, serviceUrl: "http://classify.test/"}
      - {name: pick, nodeName: pets, data: $response}
    pets:
      routerType: Switch
      steps:
      - {name: cat, nodeName: canary, condition: '[@this].#(animal=="cat")'}
      - {serviceUrl: "http://dog.test/", condition: '[@this].#(animal=="dog")'}
    canary:
      routerType: Splitter
      steps:
      - {name: stable, serviceUrl: "http://cat.test/", weight: 50}
      - {name: next, serviceUrl: "http://cat2.test/", weight: 50}
"""

ROUTES = {
    "http://classify.test/": echo,
    "http://cat.test/": answer({"says": "meow", "id": 1}),
    "http://cat2.test/": answer({"says": "purr", "id": 2}),
    "http://dog.test/": answer({"says": "woof"}),
}


def run(manifest: language.Manifest, body: bytes, seed: int) -> GraphResult:
    def handle(request: httpx.Request) -> httpx.Response:
        return ROUTES[str(request.url)](request)

    async def main() -> GraphResult:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as client:
            return await run_graph(
                manifest, body, {"Content-Type": "application/json"}, config=EngineConfig(), client=client,
                rng=random.Random(seed),
            )  # fmt: skip

    return asyncio.run(main())


def test_a_saved_run_becomes_a_case_that_passes_on_the_same_graph() -> None:
    manifest = language.parse(GRAPH)
    body = b'{"animal":"cat"}'
    result = run(manifest, body, seed=0)  # Random(0).randrange(100) == 49: "stable"
    document = case_document_from_run(
        name="saved",
        manifest=manifest,
        request_body=body,
        request_headers=[("Content-Type", "application/json"), ("Authorization", "Bearer ***")],
        content_type="application/json",
        status=result.status,
        response_body=result.body,
        events=[event.as_dict() for event in result.trace],
        seed=0,
    )
    assert document == {
        "name": "saved",
        "request": {
            "payload": {"animal": "cat"},
            "content_type": "application/json",
            "headers": {"Authorization": "Bearer ***"},
        },
        "seed": 0,
        "expectations": [
            {"status": 200},
            {"body": {"says": "meow", "id": 1}, "match": "subset"},
            {"route": "pets", "took": "cat"},
            {"route": "canary", "took": "stable"},
        ],
    }
    case = parse_case(document)
    again = run(manifest, case.request.body, seed=0)
    assert evaluate_case(case, observed_from_result(again), manifest).outcome == "passed"
    other = run(manifest, case.request.body, seed=5)  # 79: "next"
    verdict = evaluate_case(case, observed_from_result(other), manifest)
    assert [e.passed for e in verdict.expectations] == [True, False, True, False]


def test_an_unnamed_step_is_taken_by_index_and_a_text_request_stays_text() -> None:
    manifest = language.parse(GRAPH)
    result = run(manifest, b'{"animal":"dog"}', seed=0)
    document = case_document_from_run(
        name="dog",
        manifest=manifest,
        request_body=b"not json",
        request_headers=[],
        content_type="text/plain",
        status=result.status,
        response_body=result.body,
        events=[event.as_dict() for event in result.trace],
    )
    assert document["request"] == {"raw": "not json", "content_type": "text/plain"}
    assert document["expectations"][2:] == [{"route": "pets", "took": 1}]
    assert parse_case(document).request.body == b"not json"
