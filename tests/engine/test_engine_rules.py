"""Router rules of docs/router-semantics.md for the four routers (Sequence, Switch, Ensemble, Splitter),
one behaviour per test, against httpx.MockTransport; the rest is in test_engine_rules_calls.py."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest
from graphkit import ensemble, manifest, seq, splitter, switch
from mockkit import M1, M2, M3, M4, NO_MATCH_BODY, FixedDraw, Harness, cause, echo, of_type, parsed, reply

from execution.engine import map_predictions_to_instances

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
