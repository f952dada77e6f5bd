"""Router rules of docs/router-semantics.md, one behaviour per test, against httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest
from graphkit import ensemble, manifest, seq, splitter, switch
from mockkit import Harness, echo, of_type, parsed, reply

from execution.engine import EngineConfig, UrlGuard, error_body, map_predictions_to_instances
from execution.engine.config import REDACTED

M1, M2, M3, M4 = (f"http://m{i}.test/" for i in range(1, 5))
NO_MATCH_BODY = {
    "error": "Failed to process request",
    "cause": "None of the routes matched with the switch condition",
}


def cause(result_body: bytes) -> str:
    return str(json.loads(result_body)["cause"])


# --- Sequence ------------------------------------------------------------------------------------


def test_sequence_feeds_response_only_to_dollar_response_steps_after_the_first() -> None:
    """Step 0 ignores ``$response``; ``$request`` and other values mean the node input."""
    h = Harness({M1: reply({"r": 1}), M2: reply({"r": 2}), M3: reply({"r": 3}), M4: reply({"r": 4})})
    graph = manifest(
        {
            "root": seq(
                {"serviceUrl": M1, "data": "$response"},
                {"serviceUrl": M2, "data": "$response"},
                {"serviceUrl": M3, "data": "$request"},
                {"serviceUrl": M4, "data": "$response.predictions"},
            )
        }
    )
    result = h.run(graph, {"in": 0})
    assert (result.status, parsed(result)) == (200, {"r": 4})
    assert h.bodies(M1) == [{"in": 0}]
    assert h.bodies(M2) == [{"r": 1}]
    assert h.bodies(M3) == [{"in": 0}]
    assert h.bodies(M4) == [{"in": 0}]


def test_sequence_passes_the_last_body_through_byte_for_byte() -> None:
    h = Harness({M1: reply(raw=b'{ "a" : 1.0,  "z":"<>" }')})
    result = h.run(manifest({"root": seq({"serviceUrl": M1})}))
    assert result.body == b'{ "a" : 1.0,  "z":"<>" }'
    assert result.content_type == "application/json"


def test_sequence_unmet_condition_returns_previous_body_with_200_and_skips_the_rest() -> None:
    """Even a previous 4xx becomes 200; the conditional step and everything after it never run."""
    h = Harness({M1: reply({"predictions": [{"label": "cat"}]}, status=404), M2: reply({}), M3: reply({})})
    graph = manifest(
        {
            "root": seq(
                {"serviceUrl": M1},
                {"serviceUrl": M2, "condition": 'predictions.#(label=="dog")'},
                {"serviceUrl": M3},
            )
        }
    )
    result = h.run(graph)
    assert (result.status, parsed(result)) == (200, {"predictions": [{"label": "cat"}]})
    assert h.called(M2) == [] and h.called(M3) == []
    skipped = of_type(result, "step.skipped")
    assert [(e.step_index, e.data["reason"]) for e in skipped] == [
        (1, "condition-unmet"),
        (2, "after-unmet-condition"),
    ]
    decided = of_type(result, "route.decided")[0].data
    assert decided["reason"] == "condition-unmet" and decided["skipped"] == [1, 2]
    assert decided["condition"] == 'predictions.#(label=="dog")' and decided["matches"] is False
    assert json.loads(decided["evaluated"]["body"]) == {"predictions": [{"label": "cat"}]}


def test_sequence_met_condition_is_checked_against_previous_response_not_the_request() -> None:
    h = Harness({M1: reply({"ok": True}), M2: reply({"second": 1})})
    graph = manifest({"root": seq({"serviceUrl": M1}, {"serviceUrl": M2, "condition": "ok"})})
    result = h.run(graph, {"nothing": 1})
    assert parsed(result) == {"second": 1}
    assert h.bodies(M2) == [{"nothing": 1}]
    started = next(e for e in of_type(result, "step.started") if e.step_index == 1)
    assert started.data["condition"]["matches"] is True and started.data["condition"]["raw"] == "true"


def test_sequence_condition_on_step_zero_is_invalid_response() -> None:
    h = Harness({M1: reply({})})
    result = h.run(manifest({"root": seq({"serviceUrl": M1, "condition": "instances"})}), {"instances": [1]})
    assert (result.status, cause(result.body)) == (500, "invalid response")
    assert h.calls == []


def test_sequence_condition_after_non_json_response_is_invalid_response() -> None:
    h = Harness({M1: reply(raw=b"<html>oops</html>"), M2: reply({})})
    result = h.run(manifest({"root": seq({"serviceUrl": M1}, {"serviceUrl": M2, "condition": "@this"})}))
    assert (result.status, result.error) == (500, "invalid response")
    assert h.called(M2) == []


def test_sequence_soft_failure_continues_and_its_body_can_feed_the_next_step() -> None:
    h = Harness({M1: reply({"detail": "boom"}, status=503), M2: echo})
    graph = manifest({"root": seq({"serviceUrl": M1}, {"serviceUrl": M2, "data": "$response"})})
    result = h.run(graph)
    assert (result.status, parsed(result)) == (200, {"detail": "boom"})


def test_sequence_final_status_is_the_last_steps() -> None:
    h = Harness({M1: reply({"a": 1}), M2: reply({"detail": "x"}, status=404)})
    result = h.run(manifest({"root": seq({"serviceUrl": M1}, {"serviceUrl": M2})}))
    assert (result.status, parsed(result)) == (404, {"detail": "x"})
    assert result.error is None


def test_sequence_hard_failure_stops_with_that_body_and_status() -> None:
    h = Harness({M1: reply({"detail": "no"}, status=422), M2: reply({})})
    result = h.run(manifest({"root": seq({"serviceUrl": M1, "dependency": "Hard"}, {"serviceUrl": M2})}))
    assert (result.status, parsed(result)) == (422, {"detail": "no"})
    assert h.called(M2) == []
    assert [e.data["reason"] for e in of_type(result, "step.skipped")] == ["after-hard-failure"]


def test_routing_error_is_500_whatever_the_dependency() -> None:
    """A transport error is a routing error: 500 even for a Soft step; later steps do not run."""
    h = Harness({M2: reply({})})
    broken = "http://127.0.0.1:1/"

    async def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    h.routes[broken] = refuse
    result = h.run(manifest({"root": seq({"serviceUrl": broken, "dependency": "Soft"}, {"serviceUrl": M2})}))
    assert result.status == 500
    assert h.called(M2) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"predictions":[1,2],"foo":1,"instances":[9]}', b'{"instances":[1,2]}'),
        (b'{"predictions":"1"}', b'{"predictions":"1"}'),
        (b'{"predictions":[]}', b'{"predictions":[]}'),
        (b'{"instances":[1]}', b'{"instances":[1]}'),
        (b'{"Predictions":[{"b":1,"a":"<"}]}', b'{"instances":[{"a":"\\u003c","b":1}]}'),
        (b'{"predictions":[1],"instances":"x"}', b'{"predictions":[1],"instances":"x"}'),
        (b'{"predictions":[1],"instances":null}', b'{"instances":[1]}'),
        (b"[1,2]", b"[1,2]"),
        (b"not json", b"not json"),
        (b'{"predictions":[1.0, 12345678901234567890]}', b'{"instances":[1,12345678901234567000]}'),
    ],
)
def test_map_predictions_to_instances(body: bytes, expected: bytes) -> None:
    """§2.4: only a non-empty ``predictions`` array is rewritten, and every other key is dropped."""
    assert map_predictions_to_instances(body) == expected


def test_map_predictions_applies_to_the_request_of_that_step() -> None:
    h = Harness({M1: reply({"predictions": [1, 2], "model_name": "m"}), M2: echo})
    graph = manifest(
        {
            "root": seq(
                {"serviceUrl": M1}, {"serviceUrl": M2, "data": "$response", "mapPredictionsToInstances": True}
            )
        }
    )
    assert parsed(h.run(graph)) == {"instances": [1, 2]}


def test_zero_step_root_sequence_is_a_500_deviation() -> None:
    result = Harness().run(manifest({"root": seq()}))
    assert (result.status, result.error) == (500, 'node "root" has no steps')


def test_zero_step_sequence_in_an_ensemble_is_kserves_decode_error() -> None:
    """KServe answers (nil, 0): the Ensemble fails to decode the empty body (recorded from KServe)."""
    result = Harness({M1: reply({})}).run(
        manifest({"root": ensemble({"serviceUrl": M1}, {"nodeName": "empty"}), "empty": seq()})
    )
    assert (result.status, result.error) == (500, "unexpected end of JSON input")


def test_zero_step_soft_step_of_a_sequence_goes_on_as_in_kserve() -> None:
    """Recorded from KServe: a Soft zero-step node is skipped over and the next step answers 200."""
    h = Harness({M1: echo})
    graph = manifest({"root": seq({"nodeName": "empty"}, {"serviceUrl": M1}), "empty": seq()})
    result = h.run(graph, body=b'{"a":1}')
    assert (result.status, result.body) == (200, b'{"a":1}')


def test_zero_step_sequence_whose_status_reaches_the_client_is_the_500_deviation() -> None:
    """KServe writes status 0 and crashes on it; the engine names the empty node instead."""
    h = Harness({M1: reply({"a": 1})})
    graph = manifest({"root": seq({"serviceUrl": M1}, {"nodeName": "empty"}), "empty": seq()})
    result = h.run(graph)
    assert (result.status, result.error) == (500, 'node "empty" has no steps')


# --- Switch --------------------------------------------------------------------------------------


def test_switch_runs_the_first_matching_step_with_the_node_input() -> None:
    h = Harness({M1: reply({"one": 1}), M2: reply({"two": 2}, status=418), M3: reply({})})
    graph = manifest(
        {
            "root": switch(
                {"serviceUrl": M1, "condition": "missing"},
                {
                    "serviceUrl": M2,
                    "condition": "[@this].#(pick==b)",
                    "data": "$response",
                    "dependency": "Hard",
                },
                {"serviceUrl": M3, "condition": "pick"},
            )
        }
    )
    result = h.run(graph, {"pick": "b"})
    assert (result.status, parsed(result)) == (418, {"two": 2})
    assert h.bodies(M2) == [{"pick": "b"}] and h.called(M1) == [] and h.called(M3) == []
    decided = of_type(result, "route.decided")[0].data
    assert decided["router"] == "Switch" and decided["chosen"] == 1 and decided["valid_json"] is True
    assert [c["matches"] for c in decided["conditions"]] == [False, True, True]


@pytest.mark.parametrize(
    ("body", "condition"),
    [(b'{"pick":"z"}', "other"), (b"", "@this"), (b"not json", "@this"), (b"NaN", "@this")],
)
def test_root_switch_without_match_or_with_invalid_json_is_404(body: bytes, condition: str) -> None:
    h = Harness({M1: reply({})})
    result = h.run(manifest({"root": switch({"serviceUrl": M1, "condition": condition})}), body)
    assert (result.status, json.loads(result.body)) == (404, NO_MATCH_BODY)
    assert result.content_type == "application/json"
    assert h.calls == []


def test_nested_switch_without_match_becomes_500() -> None:
    graph = manifest(
        {"root": seq({"nodeName": "pick"}), "pick": switch({"serviceUrl": M1, "condition": "x"})}
    )
    result = Harness().run(graph, {"y": 1})
    assert (result.status, json.loads(result.body)) == (500, NO_MATCH_BODY)


@pytest.mark.parametrize("body", [b'{"a":1e400}', b"1e999", b'{"a":"\\ud800"}'])
def test_condition_at_this_over_any_valid_body_matches_as_in_kserve(body: bytes) -> None:
    """Recorded from KServe: 200 for each; the engine once dropped the connection on these numbers."""
    h = Harness({M1: reply({"matched": True}), M2: reply(raw=body)})
    assert parsed(h.run(manifest({"root": switch({"condition": "@this", "serviceUrl": M1})}), body=body)) == {
        "matched": True
    }
    graph = manifest({"root": seq({"serviceUrl": M2}, {"condition": "@this", "serviceUrl": M1})})
    assert parsed(h.run(graph)) == {"matched": True}


def test_switch_step_without_condition_never_matches_an_ordinary_document() -> None:
    result = Harness({M1: reply({})}).run(manifest({"root": switch({"serviceUrl": M1})}), {"a": 1})
    assert result.status == 404


# --- Ensemble ------------------------------------------------------------------------------------


def test_ensemble_keys_are_names_or_indices_and_soft_failures_are_included() -> None:
    h = Harness({M1: reply({"p": 1}), M2: reply({"detail": "nope"}, status=404), M3: reply(raw=b"null")})
    graph = manifest(
        {"root": ensemble({"name": "a", "serviceUrl": M1}, {"serviceUrl": M2}, {"serviceUrl": M3})}
    )
    result = h.run(graph, {"x": 1})
    assert (result.status, parsed(result)) == (200, {"a": {"p": 1}, "1": {"detail": "nope"}, "2": None})
    assert all(json.loads(c.content) == {"x": 1} for c in h.calls)


def test_ensemble_output_is_reencoded_like_go() -> None:
    h = Harness({M1: reply(raw=b'{"z": 1.0, "a": "<&>", "big": 12345678901234567890, "e": 1e21}')})
    result = h.run(manifest({"root": ensemble({"name": "m", "serviceUrl": M1})}))
    assert result.body == b'{"m":{"a":"\\u003c\\u0026\\u003e","big":12345678901234567000,"e":1e+21,"z":1}}'


def test_ensemble_first_hard_failure_by_index_wins() -> None:
    h = Harness(
        {
            M1: reply({"ok": 1}),
            M2: reply({"detail": "second", "b": 1.0}, status=404, delay=0.05),
            M3: reply({"detail": "third"}, status=503),
        }
    )
    graph = manifest(
        {
            "root": ensemble(
                {"serviceUrl": M1, "dependency": "Hard"},
                {"name": "two", "serviceUrl": M2, "dependency": "Hard"},
                {"serviceUrl": M3, "dependency": "Hard"},
            )
        }
    )
    result = h.run(graph)
    assert (result.status, result.body) == (404, b'{"b":1,"detail":"second"}')
    decided = of_type(result, "route.decided")[0].data
    assert (
        decided["decision"] == "hard-failure" and decided["step_index"] == 1 and decided["step_name"] == "two"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"[1,2]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        (b"", "unexpected end of JSON input"),
        (b"Not Found", "invalid character 'N' looking for beginning of value"),
    ],
)
def test_ensemble_step_body_must_be_an_object(raw: bytes, message: str) -> None:
    h = Harness({M1: reply({"a": 1}), M2: reply(raw=raw)})
    result = h.run(manifest({"root": ensemble({"serviceUrl": M1}, {"serviceUrl": M2})}))
    assert (result.status, result.error) == (500, message)


def test_ensemble_non_object_body_fails_even_for_a_hard_failing_step() -> None:
    h = Harness({M1: reply(raw=b"Not Found", status=404)})
    result = h.run(manifest({"root": ensemble({"serviceUrl": M1, "dependency": "Hard"})}))
    assert result.status == 500


def test_ensemble_with_zero_steps_is_an_empty_object() -> None:
    result = Harness().run(manifest({"root": ensemble()}))
    assert (result.status, result.body, result.content_type) == (200, b"{}", "application/json")


def test_ensemble_later_duplicate_key_wins() -> None:
    h = Harness({M1: reply({"first": 1}), M2: reply({"second": 2})})
    graph = manifest({"root": ensemble({"name": "1", "serviceUrl": M1}, {"serviceUrl": M2})})
    assert parsed(h.run(graph)) == {"1": {"second": 2}}


def test_ensemble_steps_run_concurrently() -> None:
    h = Harness({url: reply({"u": url}, delay=0.2) for url in (M1, M2, M3, M4)})
    graph = manifest({"root": ensemble(*({"serviceUrl": u} for u in (M1, M2, M3, M4)))})
    loop_time: list[float] = []

    async def timed() -> None:
        start = asyncio.get_running_loop().time()
        await asyncio.to_thread(h.run, graph)
        loop_time.append(asyncio.get_running_loop().time() - start)

    asyncio.run(timed())
    assert loop_time[0] < 0.6  # four 0.2 s steps; serial would be 0.8 s


def test_ensemble_abandons_and_cancels_slower_steps_after_an_error() -> None:
    h = Harness({M1: reply(raw=b"[]"), M2: reply({}, delay=5)})
    result = h.run(manifest({"root": ensemble({"serviceUrl": M1}, {"serviceUrl": M2})}))
    assert result.status == 500
    finished = {e.step_index: e.data["outcome"] for e in of_type(result, "step.finished")}
    assert finished == {0: "ok", 1: "cancelled"}


def test_ensemble_error_that_arrives_first_beats_a_slower_hard_failure() -> None:
    """Recorded from KServe: every wait also listens on the shared error channel."""
    h = Harness({M1: reply({"h": 1}, status=503, delay=0.3), M2: reply(raw=b"[1]", delay=0.02)})
    graph = manifest({"root": ensemble({"serviceUrl": M1, "dependency": "Hard"}, {"serviceUrl": M2})})
    result = h.run(graph)
    assert (result.status, result.error) == (
        500,
        "json: cannot unmarshal array into Go value of type map[string]interface {}",
    )


def test_ensemble_hard_failure_received_before_a_later_error_wins() -> None:
    h = Harness({M1: reply({"h": 1}, status=503, delay=0.02), M2: reply(raw=b"Nope", delay=0.3)})
    graph = manifest({"root": ensemble({"serviceUrl": M1, "dependency": "Hard"}, {"serviceUrl": M2})})
    assert (h.run(graph).status, h.run(graph).body) == (503, b'{"h":1}')


def test_ensemble_cause_is_the_first_error_to_arrive_not_the_lowest_index() -> None:
    h = Harness({M1: reply(raw=b"Nope", delay=0.3), M2: reply(raw=b"[1]", delay=0.02)})
    result = h.run(manifest({"root": ensemble({"serviceUrl": M1}, {"serviceUrl": M2})}))
    assert result.error == "json: cannot unmarshal array into Go value of type map[string]interface {}"
    decided = of_type(result, "route.decided")[0].data
    assert (decided["decision"], decided["step_index"]) == ("error", 1)


def test_nested_switch_without_match_beats_a_slower_hard_failure() -> None:
    h = Harness({M1: reply({"h": 1}, status=503, delay=0.3), M2: reply({})})
    graph = manifest(
        {
            "root": ensemble({"serviceUrl": M1, "dependency": "Hard"}, {"nodeName": "sw"}),
            "sw": switch({"condition": "nomatch", "serviceUrl": M2}),
        }
    )
    result = h.run(graph)
    assert (result.status, result.error) == (500, "None of the routes matched with the switch condition")


# --- Splitter ------------------------------------------------------------------------------------


class FixedDraw(random.Random):
    def __init__(self, *draws: int) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def randrange(self, *args: object, **kwargs: object) -> int:  # type: ignore[override]
        return self.draws.pop(0)


@pytest.mark.parametrize(("draw", "chosen"), [(0, M1), (19, M1), (20, M2), (99, M2)])
def test_splitter_picks_first_step_with_draw_below_cumulative_weight(draw: int, chosen: str) -> None:
    h = Harness({M1: reply({"m": 1}), M2: reply({"m": 2})})
    graph = manifest(
        {
            "root": splitter(
                {"serviceUrl": M1, "weight": 20}, {"serviceUrl": M2, "weight": 80, "condition": "nope"}
            )
        }
    )
    result = h.run(graph, rng=FixedDraw(draw))
    assert [str(c.url) for c in h.calls] == [chosen]
    decided = of_type(result, "route.decided")[0].data
    assert decided == {
        "router": "Splitter",
        "draw": draw,
        "weights": [20, 80],
        "cumulative": [20, 100],
        "chosen": 0 if chosen == M1 else 1,
    }


def test_splitter_returns_the_chosen_status_and_body_whatever_the_dependency() -> None:
    h = Harness({M1: reply({"d": 1}, status=404)})
    result = h.run(manifest({"root": splitter({"serviceUrl": M1, "weight": 100, "dependency": "Hard"})}))
    assert (result.status, parsed(result)) == (404, {"d": 1})


def test_splitter_without_route_is_500() -> None:
    graph = manifest({"root": splitter({"serviceUrl": M1, "weight": 30}, {"serviceUrl": M2, "weight": 0})})
    result = Harness().run(graph, rng=FixedDraw(50))
    assert (result.status, result.error) == (500, "no route was selected by the splitter")


def test_splitter_step_without_weight_reached_by_the_draw_is_the_500_deviation() -> None:
    """KServe dereferences the nil weight (a crash) only for steps it reaches before choosing."""
    h = Harness({M1: reply({"one": 1}), M2: reply({"two": 2})})
    graph = manifest({"root": splitter({"serviceUrl": M1, "weight": 40}, {"serviceUrl": M2})})
    assert parsed(h.run(graph, rng=FixedDraw(10))) == {"one": 1}
    result = h.run(graph, rng=FixedDraw(60))
    assert (result.status, result.error) == (500, 'step #1 of Splitter node "root" has no weight')


def test_splitter_seeded_draws_are_reproducible_and_roughly_weighted() -> None:
    graph = manifest({"root": splitter({"serviceUrl": M1, "weight": 30}, {"serviceUrl": M2, "weight": 70})})
    rng = random.Random(42)
    draws = [rng.randrange(100) for _ in range(2000)]
    assert all(0 <= d < 100 for d in draws)
    assert 500 < sum(d < 30 for d in draws) < 700
    first = Harness({M1: reply({}), M2: reply({})})
    second = Harness({M1: reply({}), M2: reply({})})
    for _ in range(5):
        first.run(graph, rng=random.Random(7))
        second.run(graph, rng=random.Random(7))
    assert [str(c.url) for c in first.calls] == [str(c.url) for c in second.calls]


# --- nodes, recursion, errors --------------------------------------------------------------------


def test_node_step_gets_the_same_input_bytes_and_original_headers() -> None:
    h = Harness({M1: reply({"a": 1}), M2: echo})
    graph = manifest(
        {
            "root": seq({"serviceUrl": M1}, {"nodeName": "inner", "data": "$response"}),
            "inner": seq({"serviceUrl": M2}),
        }
    )
    result = h.run(graph, b'{"in":1}', {"x-trace": "t1"}, config=EngineConfig(propagate_headers=("X-Trace",)))
    assert result.body == b'{"a": 1}'
    assert h.called(M2)[0].headers["X-Trace"] == "t1"


def test_missing_node_is_invalid_route_type_with_empty_name() -> None:
    result = Harness().run(manifest({"root": seq({"nodeName": "ghost"})}))
    assert (result.status, result.error) == (500, "invalid route type: ")


def test_unknown_router_type_is_reported() -> None:
    result = Harness().run(manifest({"root": {"routerType": "Broadcast", "steps": []}}))
    assert (result.status, result.error) == (500, "invalid route type: Broadcast")


def test_missing_root_is_invalid_route_type() -> None:
    result = Harness().run(manifest({"other": seq({"serviceUrl": M1})}))
    assert (result.status, result.error) == (500, "invalid route type: ")


def test_cycles_are_detected_on_the_call_stack() -> None:
    h = Harness({M1: reply({})})
    graph = manifest(
        {
            "root": seq({"serviceUrl": M1}, {"nodeName": "a"}),
            "a": seq({"nodeName": "b"}),
            "b": seq({"nodeName": "a"}),
        }
    )
    result = h.run(graph)
    assert (result.status, result.error) == (500, "cycle detected: a -> b -> a")


def test_a_cycle_the_request_leaves_runs_as_in_kserve() -> None:
    """Re-entering a node with another input is not a cycle: here the loop ends when the count is 3."""
    count = {"n": 0}

    def counter(request: httpx.Request) -> httpx.Response:
        count["n"] += 1
        return httpx.Response(200, json={"n": count["n"]})

    h = Harness({M1: counter, M2: reply({"done": True})})
    graph = manifest(
        {
            "root": seq({"serviceUrl": M1}, {"nodeName": "check", "data": "$response"}),
            "check": switch(
                {"condition": "[@this].#(n>=3)", "serviceUrl": M2},
                {"condition": "n", "nodeName": "root"},
            ),
        }
    )
    result = h.run(graph, body=b"{}")
    assert (result.status, parsed(result), count["n"]) == (200, {"done": True}, 3)


def test_a_cycle_through_a_splitter_is_not_cut_short() -> None:
    """A Splitter may leave the loop on its next draw, so only the draws decide (as in KServe)."""
    h = Harness({M1: reply({"out": 1})})
    graph = manifest({"root": splitter({"nodeName": "root", "weight": 50}, {"serviceUrl": M1, "weight": 50})})
    result = h.run(graph, rng=FixedDraw(10, 20, 70))
    assert (result.status, parsed(result)) == (200, {"out": 1})
    assert len(of_type(result, "route.decided")) == 3


@pytest.mark.parametrize("depth", [250, 1500])
def test_a_deep_chain_of_node_calls_runs(depth: int) -> None:
    nodes = {f"n{i}": seq({"nodeName": f"n{i + 1}"}) for i in range(depth)}
    nodes[f"n{depth}"] = seq({"serviceUrl": M1})
    nodes["root"] = seq({"nodeName": "n0"})
    result = Harness({M1: echo}).run(manifest(nodes), body=b'{"deep":true}')
    assert (result.status, result.body) == (200, b'{"deep":true}')


def test_a_node_reached_twice_is_not_a_cycle() -> None:
    h = Harness({M1: reply({"x": 1})})
    graph = manifest(
        {
            "root": ensemble({"nodeName": "leaf"}, {"nodeName": "mid"}),
            "mid": seq({"nodeName": "leaf"}),
            "leaf": seq({"serviceUrl": M1}),
        }
    )
    result = h.run(graph)
    assert (result.status, parsed(result)) == (200, {"0": {"x": 1}, "1": {"x": 1}})
    calls = sorted(e.call_id for e in of_type(result, "step.started"))
    assert calls == ["root/0", "root/0>leaf/0", "root/1", "root/1>mid/0", "root/1>mid/0>leaf/0"]


def test_service_name_resolves_through_the_map_then_the_template() -> None:
    mapped = "http://mapped.test/predict"
    templ = "http://known.team-a.svc.cluster.local/v1/models/known:predict"
    h = Harness({mapped: reply({"m": 1}), templ: reply({"t": 1})})
    graph = manifest(
        {"root": ensemble({"name": "a", "serviceName": "mine"}, {"name": "b", "serviceName": "known"})},
        namespace="team-a",
    )
    result = h.run(graph, config=EngineConfig(service_urls={"mine": mapped}))
    assert parsed(result) == {"a": {"m": 1}, "b": {"t": 1}}
    result = Harness({"http://known.ns.example/known": reply({}), mapped: reply({})}).run(
        graph,
        config=EngineConfig(
            service_urls={"mine": mapped},
            url_template="http://{name}.{namespace}.example/{name}",
            namespace="ns",
        ),
    )
    assert parsed(result)["b"] == {}


def test_service_url_wins_over_service_name_and_node_name_wins_over_both() -> None:
    h = Harness({M1: reply({"url": 1}), M2: reply({"node": 1})})
    graph = manifest(
        {
            "root": ensemble(
                {"name": "u", "serviceName": "x", "serviceUrl": M1},
                {"name": "n", "nodeName": "n", "serviceUrl": M1},
            ),
            "n": seq({"serviceUrl": M2}),
        }
    )
    assert parsed(h.run(graph)) == {"u": {"url": 1}, "n": {"node": 1}}


def test_every_call_is_a_post() -> None:
    h = Harness({M1: reply({})})
    h.run(manifest({"root": seq({"serviceUrl": M1})}))
    assert [c.method for c in h.calls] == ["POST"]


def test_error_body_is_exactly_kserves() -> None:
    assert (
        error_body('say "<hi>"')
        == b'{"error":"Failed to process request","cause":"say \\"\\u003chi\\u003e\\""}'
    )


# --- responses -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "content_type"),
    [
        (b'{"a":1}', "application/json"),
        (b"[1]\n", "application/json"),
        (b"hello world", "text/plain; charset=utf-8"),
        (b"", None),
        (b'{"a":NaN}', "text/plain; charset=utf-8"),
        (b"\x00\x01\x02binary", "application/octet-stream"),
        (b"<html><body>x</body></html>", "text/html; charset=utf-8"),
    ],
)
def test_response_content_type(raw: bytes, content_type: str | None) -> None:
    """application/json only for valid (strict) JSON; otherwise Go-style sniffing."""
    result = Harness({M1: reply(raw=raw)}).run(manifest({"root": seq({"serviceUrl": M1})}))
    assert (result.body, result.content_type) == (raw, content_type)


# --- headers -------------------------------------------------------------------------------------


def test_matching_headers_are_propagated_to_every_step_at_every_depth() -> None:
    h = Harness({M1: reply({}), M2: reply({})})
    graph = manifest({"root": seq({"serviceUrl": M1}, {"nodeName": "n"}), "n": ensemble({"serviceUrl": M2})})
    config = EngineConfig(propagate_headers=("^X-Req", "Auth"))
    h.run(graph, headers={"x-request-id": "r1", "authorization": "Bearer t", "cookie": "c"}, config=config)
    for call in h.calls:
        assert call.headers["X-Request-Id"] == "r1"
        assert call.headers["Authorization"] == "Bearer t"
        assert "Cookie" not in call.headers
        assert call.headers["Content-Type"] == "application/json"


def test_invalid_pattern_is_reported_once_in_the_result_and_run_event() -> None:
    h = Harness({M1: reply({})})
    config = EngineConfig(propagate_headers=("Test-Header-[0-9", "Auth*"))
    result = h.run(manifest({"root": seq({"serviceUrl": M1})}), headers={"Authorization": "a"}, config=config)
    assert len(result.warnings) == 1 and "Test-Header-[0-9" in result.warnings[0]
    assert of_type(result, "run.finished")[0].data["warnings"] == list(result.warnings)
    assert h.calls[0].headers["Authorization"] == "a"


def test_trace_redacts_secret_header_values_but_sends_them() -> None:
    h = Harness({M1: reply({})})
    config = EngineConfig(propagate_headers=("Authorization",))
    result = h.run(
        manifest({"root": seq({"serviceUrl": M1})}), headers={"Authorization": "Bearer s3cret"}, config=config
    )
    sent = of_type(result, "step.started")[0].data["headers"]
    assert ["Authorization", REDACTED] in sent
    assert "s3cret" not in json.dumps([e.as_dict() for e in result.trace])
    assert h.calls[0].headers["Authorization"] == "Bearer s3cret"


# --- transport failures --------------------------------------------------------------------------


def test_malformed_url_is_500_with_gos_parse_error() -> None:
    url = "http://single-1.default.{$your-domain}/switch"
    result = Harness().run(manifest({"root": seq({"serviceUrl": url})}))
    assert result.status == 500
    assert result.error == f'parse "{url}": invalid character "{{" in host name'


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://x.test/", 'Post "ftp://x.test/": unsupported protocol scheme "ftp"'),
        ("", 'Post "": unsupported protocol scheme ""'),
        ("http://x.test:abc/", 'parse "http://x.test:abc/": invalid port ":abc" after host'),
    ],
)
def test_unusable_urls_are_500(url: str, message: str) -> None:
    result = Harness().run(manifest({"root": seq({"serviceUrl": url})}))
    assert (result.status, result.error) == (500, message)


def test_step_without_any_target_posts_to_the_empty_url_like_go() -> None:
    result = Harness().run(manifest({"root": seq({"name": "nothing"})}))
    assert (result.status, result.error) == (500, 'Post "": unsupported protocol scheme ""')


def test_service_client_timeout_is_per_call_and_reads_like_go() -> None:
    h = Harness({M1: reply({}, delay=5)})
    config = EngineConfig(step_timeout=0.1)
    result = h.run(manifest({"root": seq({"serviceUrl": M1})}), config=config)
    assert result.status == 500
    assert (
        result.error
        == f'Post "{M1}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    )


def test_config_step_timeout_only_tightens_service_client() -> None:
    h = Harness({M1: reply({}, delay=0.3)})
    graph = manifest({"root": seq({"serviceUrl": M1})}, router_timeouts={"serviceClient": 5})
    assert h.run(graph, config=EngineConfig(step_timeout=0.1)).status == 500
    graph_tight = manifest({"root": seq({"serviceUrl": M1})}, router_timeouts={"serviceClient": 1})
    started = of_type(h.run(graph_tight, config=EngineConfig(step_timeout=30)), "step.started")[0]
    assert started.data["timeout_s"] == 1


def test_deadline_is_504_and_the_trace_shows_the_step_in_flight() -> None:
    h = Harness({M1: reply({"a": 1}), M2: reply({}, delay=5)})
    graph = manifest({"root": seq({"serviceUrl": M1}, {"name": "slow", "serviceUrl": M2})})
    result = h.run(graph, config=EngineConfig(deadline=0.2))
    assert result.status == 504
    assert json.loads(result.body) == {
        "error": "Failed to process request",
        "cause": "graph deadline of 0.2 s exceeded",
    }
    finished = of_type(result, "step.finished")
    assert [(e.step_name, e.data["outcome"]) for e in finished] == [(None, "ok"), ("slow", "timeout")]
    assert of_type(result, "run.finished")[0].data["outcome"] == "timeout"


def test_server_write_is_the_default_deadline() -> None:
    h = Harness({M1: reply({}, delay=5)})
    graph = manifest({"root": seq({"serviceUrl": M1})}, router_timeouts={"serverWrite": 1})
    result = h.run(graph)
    assert (result.status, result.error) == (504, "graph deadline of 1 s exceeded")


def test_response_over_the_cap_fails_the_step() -> None:
    h = Harness({M1: reply(raw=b"x" * 2048)})
    result = h.run(manifest({"root": seq({"serviceUrl": M1})}), config=EngineConfig(max_response_bytes=1024))
    assert result.status == 500
    assert result.error == f'Post "{M1}": response body exceeds the engine\'s 1024-byte limit'


def test_guard_refusal_is_a_step_error_and_nothing_is_sent() -> None:
    h = Harness()
    url = "http://169.254.169.254/latest/meta-data/"
    result = h.run(manifest({"root": seq({"serviceUrl": url})}), config=EngineConfig(guard=UrlGuard()))
    assert result.status == 500
    assert (
        result.error
        == f'Post "{url}": blocked by URL guard: 169.254.169.254 is a link-local/metadata address'
    )
    assert h.calls == []
    assert of_type(result, "step.finished")[0].data["outcome"] == "error"


# --- trace ---------------------------------------------------------------------------------------


def test_trace_events_are_ordered_stamped_and_linked() -> None:
    ticks = iter(range(1000))
    h = Harness({M1: reply({"a": 1})})
    graph = manifest({"root": seq({"name": "first", "nodeName": "inner"}), "inner": seq({"serviceUrl": M1})})
    result = h.run(graph, clock=lambda: float(next(ticks)))
    assert [e.seq for e in result.trace] == list(range(1, len(result.trace) + 1))
    assert [e.timestamp for e in result.trace] == sorted(e.timestamp for e in result.trace)
    assert list(result.trace) == h.events
    summary = [(e.type, e.call_id, e.parent_call_id, e.node, e.step_index, e.target) for e in result.trace]
    assert summary == [
        ("node.started", "root", None, "root", None, None),
        ("step.started", "root/0", None, "root", 0, "inner"),
        ("node.started", "root/0>inner", "root/0", "inner", None, None),
        ("step.started", "root/0>inner/0", "root/0", "inner", 0, M1),
        ("step.finished", "root/0>inner/0", "root/0", "inner", 0, M1),
        ("node.finished", "root/0>inner", "root/0", "inner", None, None),
        ("step.finished", "root/0", None, "root", 0, "inner"),
        ("node.finished", "root", None, "root", None, None),
        ("run.finished", "root", None, None, None, None),
    ]
    step_done = result.trace[4].data
    assert step_done["status"] == 200 and step_done["outcome"] == "ok" and step_done["duration_ms"] == 2000.0
    assert json.loads(json.dumps([e.as_dict() for e in result.trace]))  # JSON-compatible


def test_trace_bodies_are_capped_with_size_and_flag() -> None:
    h = Harness({M1: reply(raw=b'{"pad":"' + b"y" * 500 + b'"}')})
    result = h.run(
        manifest({"root": seq({"serviceUrl": M1})}),
        b'"' + "é".encode() * 100 + b'"',
        config=EngineConfig(body_cap=64),
    )
    sent = of_type(result, "step.started")[0].data["request"]
    assert sent["size"] == 202 and sent["truncated"] is True and sent["encoding"] == "utf-8"
    assert len(sent["body"].encode()) <= 64
    got = of_type(result, "step.finished")[0].data["response"]
    assert (got["size"], got["truncated"], len(got["body"])) == (510, True, 64)
    binary = Harness({M1: reply(raw=b"\xff\xfe\x00")}).run(manifest({"root": seq({"serviceUrl": M1})}))
    assert of_type(binary, "step.finished")[0].data["response"]["encoding"] == "base64"


def test_a_failing_event_callback_does_not_change_the_answer() -> None:
    h = Harness({M1: reply({"a": 1})})

    def explode(event: object) -> None:
        raise RuntimeError("observer down")

    async def main() -> bytes:
        from execution.engine import run_graph

        async with httpx.AsyncClient(transport=httpx.MockTransport(h._handle)) as client:
            result = await run_graph(
                manifest({"root": seq({"serviceUrl": M1})}),
                b"{}",
                {},
                config=EngineConfig(),
                client=client,
                on_event=explode,
            )
            return result.body

    assert json.loads(asyncio.run(main())) == {"a": 1}


def test_cancellation_reports_in_flight_steps_and_reraises() -> None:
    h = Harness({M1: reply({}, delay=10), M2: reply({}, delay=10)})
    events: list[str] = []

    async def main() -> None:
        from execution.engine import run_graph

        async with httpx.AsyncClient(transport=httpx.MockTransport(h._handle)) as client:
            task = asyncio.create_task(
                run_graph(
                    manifest({"root": ensemble({"serviceUrl": M1}, {"serviceUrl": M2})}),
                    b"{}",
                    {},
                    config=EngineConfig(),
                    client=client,
                    on_event=lambda e: events.append(f"{e.type}:{e.call_id}:{e.data.get('outcome')}"),
                )
            )
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert "step.finished:root/0:cancelled" in events
    assert "step.finished:root/1:cancelled" in events
    assert events[-1] == "run.finished:root:cancelled"


def test_run_graph_sync_works_from_a_thread_whose_event_loop_is_running() -> None:
    """A sync caller inside a running loop (Playwright's sync API leaves one) still gets a result."""
    from execution.engine import run_graph_sync

    graph = manifest({"root": ensemble()})

    async def caller() -> bytes:
        return run_graph_sync(graph, b"{}", {}, config=EngineConfig()).body

    assert asyncio.run(caller()) == b"{}"


def test_a_loop_fed_a_new_input_every_round_ends_at_the_call_depth_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """KServe follows it until its stack overflows (a crash); the engine stops with a clear cause.
    (The limit is 10,000 levels; 40 here keeps the test short.)"""
    from execution.engine import calls

    monkeypatch.setattr(calls, "MAX_CALL_DEPTH", 40)
    count = {"n": 0}

    def counter(request: httpx.Request) -> httpx.Response:
        count["n"] += 1
        return httpx.Response(200, json={"n": count["n"]})

    graph = manifest({"root": seq({"serviceUrl": M1}, {"nodeName": "root", "data": "$response"})})
    result = Harness({M1: counter}).run(graph, body=b"{}")
    assert (result.status, result.error) == (500, "node calls nested deeper than 40 levels (a loop?)")
    assert count["n"] == 41


def test_the_deadline_ends_a_deep_loop_with_504() -> None:
    """Cancelling hundreds of nested node calls at once must not overflow Python's stack."""

    count = {"n": 0}

    def counter(request: httpx.Request) -> httpx.Response:
        count["n"] += 1
        return httpx.Response(200, json={"n": count["n"]})

    graph = manifest({"root": seq({"serviceUrl": M1}, {"nodeName": "root", "data": "$response"})})
    result = Harness({M1: counter}).run(graph, body=b"{}", config=EngineConfig(deadline=0.5))
    assert (result.status, result.error) == (504, "graph deadline of 0.5 s exceeded")
    assert max(e.data["depth"] for e in of_type(result, "node.started")) > 64
