"""Comparing two runs of one request step by step (version A against version B): status, route,
every step's presence, status and request/response payloads, matched by step names."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import httpx
from casekit import Answer, answer, echo

from execution.casecore import Observed, observed_from_result
from execution.casecore.compare import compare_runs
from execution.engine import EngineConfig, run_graph
from graphs import language

A = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: pets
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
      - {name: cat, serviceUrl: "http://cat.test/", condition: '[@this].#(animal=="cat")'}
      - {name: dog, serviceUrl: "http://dog.test/", condition: '[@this].#(animal=="dog")'}
"""
ROUTES: dict[str, Answer] = {
    "http://classify.test/": echo,
    "http://cat.test/": answer({"says": "meow"}),
    "http://dog.test/": answer({"says": "woof"}),
    "http://normalise.test/": echo,
}


def observe(manifest_yaml: str, body: Any, routes: Mapping[str, Answer] = ROUTES) -> Observed:
    manifest = language.parse(manifest_yaml)

    def handle(request: httpx.Request) -> httpx.Response:
        return routes[str(request.url)](request)

    async def main() -> Observed:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as client:
            result = await run_graph(
                manifest, json.dumps(body).encode(), {}, config=EngineConfig(), client=client
            )
            return observed_from_result(result)

    return asyncio.run(main())


def test_two_runs_of_the_same_version_differ_in_nothing_but_latency() -> None:
    comparison = compare_runs(observe(A, {"animal": "cat"}), observe(A, {"animal": "cat"}))
    assert comparison.same
    assert [s.label for s in comparison.steps] == ["root/classify", "root/pick", "root/pick>pets/cat"]
    assert comparison.as_dict()["steps"][0]["a"]["status"] == 200


def test_a_changed_route_shows_the_route_each_step_and_the_body() -> None:
    swapped = (
        A.replace('animal=="cat"', "TMP")
        .replace('animal=="dog"', 'animal=="cat"')
        .replace("TMP", 'animal=="dog"')
    )
    comparison = compare_runs(observe(A, {"animal": "cat"}), observe(swapped, {"animal": "cat"}))
    assert not comparison.same
    assert [r.as_dict() for r in comparison.routes] == [
        {"node": "root/pick>pets", "a": ["cat"], "b": ["dog"]}
    ]
    by_label = {s.label: s for s in comparison.steps}
    assert (
        by_label["root/pick>pets/cat"].changed == ("presence",) and by_label["root/pick>pets/cat"].b is None
    )
    assert (
        by_label["root/pick>pets/dog"].changed == ("presence",) and by_label["root/pick>pets/dog"].a is None
    )
    assert by_label["root/classify"].changed == ()
    assert [d.as_dict() for d in by_label["root/pick"].response_diff] == [
        {"path": "$.says", "op": "changed", "expected": "meow", "actual": "woof"}
    ]
    assert [d.path for d in comparison.body_diff] == ["$.says"]


def test_an_intermediate_payload_change_is_shown_where_it_happens() -> None:
    """Version B's classifier adds a field: its response and the next step's request differ,
    although the final answer is the same."""
    routes = {**ROUTES, "http://classify.test/": answer({"animal": "cat", "confidence": 0.7})}
    comparison = compare_runs(observe(A, {"animal": "cat"}), observe(A, {"animal": "cat"}, routes))
    assert comparison.body_diff == ()
    by_label = {s.label: s for s in comparison.steps}
    assert by_label["root/classify"].changed == ("response",)
    assert [d.as_dict() for d in by_label["root/classify"].response_diff] == [
        {"path": "$.confidence", "op": "unexpected", "actual": 0.7}
    ]
    assert by_label["root/pick"].changed == ("request",)
    assert by_label["root/pick>pets/cat"].changed == ("request",)


def test_an_inserted_step_does_not_shift_the_comparison_of_the_others() -> None:
    inserted = A.replace(
        '      - {name: classify, serviceUrl: "http://classify.test/"}\n',
        '      - {name: normalise, serviceUrl: "http://normalise.test/"}\n'
        '      - {name: classify, serviceUrl: "http://classify.test/", data: $response}\n',
    )
    comparison = compare_runs(observe(A, {"animal": "cat"}), observe(inserted, {"animal": "cat"}))
    assert comparison.same is False
    changed = {s.label: s.changed for s in comparison.steps if s.changed}
    assert changed == {"root/normalise": ("presence",)}
    assert comparison.routes == () and comparison.body_diff == ()


def test_a_failing_step_in_b_shows_its_status_and_outcome() -> None:
    routes = {**ROUTES, "http://cat.test/": answer({"error": "busy"}, 503)}
    comparison = compare_runs(observe(A, {"animal": "cat"}), observe(A, {"animal": "cat"}, routes))
    assert comparison.status == (200, 503)
    cat = next(s for s in comparison.steps if s.label == "root/pick>pets/cat")
    assert cat.changed == ("status", "outcome", "response")
    assert (cat.a or {})["outcome"] == "ok" and (cat.b or {})["outcome"] == "http-error"


LOOP = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: loop
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
      - {name: model, serviceUrl: "http://count.test/"}
      - {name: next, nodeName: b, data: $response}
    b:
      routerType: Sequence
      steps:
      - {name: model, serviceUrl: "http://count.test/"}
      - {name: next, nodeName: root, data: $response}
"""


def test_labels_of_a_deep_loop_stay_bounded_and_match_between_two_runs() -> None:
    """Labels follow the calls' parent links; past 512 characters a digest stands for the path."""

    def counting() -> Mapping[str, Answer]:
        calls = iter(range(1_000_000))
        return {"http://count.test/": lambda _request: httpx.Response(200, json={"n": next(calls)})}

    def run() -> Observed:
        manifest = language.parse(LOOP)
        routes = counting()

        async def main() -> Observed:
            transport = httpx.MockTransport(lambda request: routes[str(request.url)](request))
            async with httpx.AsyncClient(transport=transport) as client:
                config = EngineConfig(max_step_calls=400)
                result = await run_graph(manifest, b"{}", {}, config=config, client=client)
                return observed_from_result(result)

        return asyncio.run(main())

    comparison = compare_runs(run(), run())
    labels = [s.label for s in comparison.steps]
    assert len(labels) == 400 and len(set(labels)) == 400
    assert labels[:3] == ["root/model", "root/next", "root/next>b/model"]
    assert max(len(label) for label in labels) < 600
    assert comparison.same
