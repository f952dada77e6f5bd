"""Go's encoding/json byte for byte: error texts, re-encoding, ``json.Valid`` and the depth limit.

The vectors were recorded from KServe's router (``tests/engine/oraclekit.py``):

- ``data/gojson_ensemble.json``: a root Ensemble with one step ``s`` answering ``step_body``; the
  router answers 200 with ``{"s": <Go's re-encoding>}`` or 500 with Go's unmarshal error as
  ``cause``. Deep bodies are stored as ``step_body_parts`` ([text, repeat] pieces) and long answers
  by SHA-256.
- ``data/gojson_map_predictions.json``: a Sequence step with ``mapPredictionsToInstances`` that
  echoes what it receives, so ``body_hex`` is the rewritten (or untouched) request.

``test_*_still_match_the_oracle`` re-ask the router where the oracle exists and skip elsewhere.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from oraclekit import OracleRouter, ensemble_graph, require_oracle

from execution.engine import error_body
from execution.engine.goports import gojson
from execution.engine.goports.gojson import (
    GoJsonError,
    go_json_dumps,
    go_json_loads,
    go_syntax_error,
    go_unmarshal_object,
    go_unmarshal_predictions,
    is_valid_json,
)
from execution.engine.runner import map_predictions_to_instances

_DATA = Path(__file__).parent / "data"
_ENSEMBLE: list[dict[str, Any]] = json.loads((_DATA / "gojson_ensemble.json").read_text())
_MAP: list[dict[str, Any]] = json.loads((_DATA / "gojson_map_predictions.json").read_text())


def _step_body(vector: dict[str, Any]) -> bytes:
    if "step_body_parts" in vector:
        return b"".join(text.encode() * count for text, count in vector["step_body_parts"])
    return bytes.fromhex(vector["step_body_hex"])


def _name(vector: dict[str, Any]) -> str:
    return str(vector.get("name") or _step_body(vector)[:40])


def _ensemble_answer(step_body: bytes) -> tuple[int, bytes]:
    """What the engine's Ensemble does with one step's body (routers._ensemble, one step)."""
    try:
        parsed = go_unmarshal_object(step_body)
    except GoJsonError as exc:
        return 500, error_body(str(exc))
    return 200, go_json_dumps({"s": parsed})


def _expected_body(vector: dict[str, Any]) -> bytes | None:
    if "cause" in vector:
        return error_body(vector["cause"])
    if "body_hex" in vector:
        return bytes.fromhex(vector["body_hex"])
    return None


@pytest.mark.parametrize("vector", _ENSEMBLE, ids=[_name(v) for v in _ENSEMBLE])
def test_ensemble_decode_and_reencode_match_the_router(vector: dict[str, Any]) -> None:
    """Status, cause and re-encoded bytes of a one-step Ensemble are the router's."""
    status, body = _ensemble_answer(_step_body(vector))
    assert status == vector["status"]
    expected = _expected_body(vector)
    if expected is not None:
        assert body == expected
    else:
        assert (len(body), hashlib.sha256(body).hexdigest()) == (vector["body_len"], vector["body_sha256"])


@pytest.mark.parametrize("vector", _ENSEMBLE, ids=[_name(v) for v in _ENSEMBLE])
def test_is_valid_json_is_gos_json_valid(vector: dict[str, Any]) -> None:
    """Go's json.Valid is true exactly when Unmarshal got past the scanner (no syntax error)."""
    syntax_error = vector["status"] == 500 and not vector["cause"].startswith("json: cannot unmarshal")
    body = _step_body(vector)
    assert is_valid_json(body) is not syntax_error
    assert (go_syntax_error(body) is None) is not syntax_error


def test_errors_name_the_byte_not_the_decoded_character() -> None:
    """A UTF-8 BOM is named as 'ï' (its first byte as a Latin-1 rune), é's lead byte as 'Ã'."""
    with pytest.raises(GoJsonError, match=r"^invalid character 'ï' looking for beginning of value$"):
        go_json_loads(b"\xef\xbb\xbf{}")
    with pytest.raises(GoJsonError, match=r"^invalid character 'Ã' looking for beginning of value$"):
        go_json_loads("é".encode())


def test_end_of_input_is_a_space_to_gos_scanner() -> None:
    """Go feeds one ' ' at EOF, so an unfinished number or literal names ' ', a string does not."""
    assert go_syntax_error(b"-") == "invalid character ' ' in numeric literal"
    assert go_syntax_error(b"[tr") == "invalid character ' ' in literal true (expecting 'u')"
    assert go_syntax_error(b'"abc') == "unexpected end of JSON input"


def test_invalid_utf8_becomes_one_replacement_character_per_byte() -> None:
    assert go_json_loads(b'"\xe6\x97"') == "\ufffd\ufffd"
    assert go_json_loads(b'{"\xff":"\xf4\x90\x80\x80"}') == {"\ufffd": "\ufffd" * 4}


def test_lone_surrogate_escapes_decode_to_replacement_characters() -> None:
    assert go_json_loads(b'"\\ud800\\ud800\\udc00\\udc00"') == "\ufffd\U00010000\ufffd"
    assert go_json_loads(b'{"\\ud800":1,"\\ufffd":2,"\\udfff":3}') == {"\ufffd": 3.0}


def test_a_number_beyond_float64_is_reported_after_syntax_errors() -> None:
    with pytest.raises(
        GoJsonError, match=r"^json: cannot unmarshal number -1e400 into Go value of type float64$"
    ):
        go_json_loads(b"[-1e400, 1e999]")
    with pytest.raises(GoJsonError, match=r"^invalid character 'x' looking for beginning of value$"):
        go_json_loads(b"[1e400, x]")
    assert go_json_loads(b"1e-400") == 0.0


@pytest.mark.parametrize("depth", [2000, 9999, 10000])
def test_nesting_up_to_ten_thousand_decodes_and_encodes(depth: int) -> None:
    body = b"[" * depth + b"]" * depth
    assert is_valid_json(body)
    value = go_json_loads(body)
    assert go_json_dumps(value) == body
    wrapped = b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)
    assert go_json_dumps(go_unmarshal_object(wrapped)) == wrapped


@pytest.mark.parametrize("depth", [10001, 400_000])
def test_deeper_nesting_is_gos_max_depth_error(depth: int) -> None:
    body = b"[" * depth + b"]" * depth
    assert not is_valid_json(body)
    with pytest.raises(GoJsonError, match=r"^invalid character '\[' exceeded max depth$"):
        go_json_loads(body)
    with pytest.raises(GoJsonError, match=r"^invalid character '\{' exceeded max depth$"):
        go_unmarshal_object(b'{"a":' * depth)


def test_encoding_a_deep_tree_does_not_recurse() -> None:
    value: Any = "x"
    for _ in range(200_000):
        value = {"k": [value]}
    encoded = go_json_dumps(value)
    assert encoded.startswith(b'{"k":[{"k":[') and encoded.endswith(b'"x"' + b"]}" * 200_000)


def _mapped(body: bytes) -> bytes:
    """KServe's mapPredictionsToInstances: the way the runner is meant to call the decoder."""
    try:
        predictions = go_unmarshal_predictions(body)
    except GoJsonError:
        return body
    if not predictions:
        return body
    return go_json_dumps({"instances": predictions})


@pytest.mark.parametrize(
    "vector", _MAP, ids=[bytes.fromhex(v["input_hex"])[:40].decode("latin-1") for v in _MAP]
)
def test_map_predictions_decode_matches_the_router(vector: dict[str, Any]) -> None:
    assert _mapped(bytes.fromhex(vector["input_hex"])) == bytes.fromhex(vector["body_hex"])


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"predictions":[1],"x":1e400}', id="unknown key not decoded"),
        pytest.param(b'{"prediction\xc5\xbf":[1]}', id="long s folds to s"),
    ],
)
def test_runner_map_predictions_matches_the_router(body: bytes) -> None:
    assert map_predictions_to_instances(body) == b'{"instances":[1]}'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b'{"predictions":"x"}',
            "json: cannot unmarshal string into Go struct field .predictions of type []interface {}",
        ),
        (
            b'{"Instances":{}}',
            "json: cannot unmarshal object into Go struct field .instances of type []interface {}",
        ),
        (
            b'{"predictions":[{"a":1e400}]}',
            "json: cannot unmarshal number 1e400 into Go struct field .predictions of type float64",
        ),
        (
            b"[1]",
            "json: cannot unmarshal array into Go value of type struct { Predictions []interface {} "
            '"json:\\"predictions,omitempty\\""; Instances []interface {} "json:\\"instances,omitempty\\"" }',
        ),
        (b"", "unexpected end of JSON input"),
    ],
)
def test_map_predictions_decode_errors_read_like_go(body: bytes, message: str) -> None:
    """Go's wording (the router swallows these errors; only that they occur is recorded)."""
    with pytest.raises(GoJsonError) as caught:
        go_unmarshal_predictions(body)
    assert str(caught.value) == message


def test_ensemble_vectors_still_match_the_oracle(server: Any) -> None:
    """Re-ask KServe's router for every recorded Ensemble vector (skipped without the oracle)."""
    require_oracle()
    from stepserver import Reply

    url = server.route("/x", Reply(body=b"", content_type=None))
    differ = []
    with OracleRouter(ensemble_graph(url)) as router:
        for vector in _ENSEMBLE:
            server.route("/x", Reply(body=_step_body(vector), content_type=None))
            answer = router.answer(b"{}")
            expected = _expected_body(vector)
            if expected is None:
                got = (answer.status, len(answer.body), hashlib.sha256(answer.body).hexdigest())
                if got != (vector["status"], vector["body_len"], vector["body_sha256"]):
                    differ.append(_name(vector))
            elif (answer.status, answer.body) != (vector["status"], expected):
                differ.append(_name(vector))
    assert differ == []


def test_map_vectors_still_match_the_oracle(server: Any) -> None:
    """Re-ask KServe's router for every mapPredictionsToInstances vector (skipped without it)."""
    require_oracle()
    from stepserver import Echo

    url = server.route("/x", Echo())
    graph = {
        "nodes": {
            "root": {
                "routerType": "Sequence",
                "steps": [{"serviceUrl": url, "mapPredictionsToInstances": True}],
            }
        }
    }
    differ = []
    with OracleRouter(graph) as router:
        for vector in _MAP:
            answer = router.answer(bytes.fromhex(vector["input_hex"]))
            if (answer.status, answer.body) != (vector["status"], bytes.fromhex(vector["body_hex"])):
                differ.append(vector["input_hex"])
    assert differ == []


_JSONISH = st.lists(
    st.sampled_from(
        [b"{", b"}", b"[", b"]", b":", b",", b" ", b"\n", b'"a"', b'"\\u00e9"', b'"\\ud800"', b'"\xff"', b"1", b"-0.5",
         b"1e400", b"true", b"null", b"NaN", b"\xef\xbb\xbf", b'"k":', b"0", b"12345678901234567890"]
    ),
    max_size=12,
).map(b"".join)  # fmt: skip


@given(_JSONISH)
def test_fast_path_and_exact_parser_agree(data: bytes) -> None:
    """The C-json fast path never answers differently from the exact byte-level parser."""
    assert is_valid_json(data) is (go_syntax_error(data) is None)
    try:
        fast: Any = ("ok", go_json_loads(data))
    except GoJsonError as exc:
        fast = ("error", str(exc))
    try:
        parsed = gojson._exact(data)  # the exact parser alone (private on purpose)
        exact: Any = (
            ("ok", parsed.value)
            if not parsed.errors
            else ("error", f"json: cannot unmarshal number {parsed.errors[0]} into Go value of type float64")
        )
    except GoJsonError as exc:
        exact = ("error", str(exc))
    assert repr(fast) == repr(exact)


@pytest.mark.parametrize(("depth", "valid"), [(9999, True), (10000, False)])
def test_depth_limit_holds_for_containers_after_the_first_element(depth: int, valid: bool) -> None:
    """The validator's shortcut for flat containers respects the limit like the first element does."""
    for member in (b"[1]", b'{"a":1}', b"[]"):
        body = b"[" * depth + b"1," + member + b"]" * depth
        assert is_valid_json(body) is valid
        expected = None if valid else f"invalid character '{chr(member[0])}' exceeded max depth"
        assert go_syntax_error(body) == expected
