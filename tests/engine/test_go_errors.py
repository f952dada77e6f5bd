"""Go's URL and transport error texts, byte for byte (docs/router-semantics.md, "Outbound calls").

``data/go_url_errors.json``: a root Sequence whose one step has ``serviceUrl`` = ``url`` (``{R}``
is a loopback port nothing listens on, 9 when recorded; ``{S}`` a step server answering
``{"ok": 1}``), and what KServe's router answered. Vectors whose text depends on the machine (a
DNS server's address, an IPv6 zone) were left out. ``data/go_transport_errors.json``: the step is a
raw TCP server answering ``answer_hex`` (then closing, with an RST if ``reset``), or with ``"server":
"http"`` a real plain-HTTP step server (which answers a TLS ClientHello as a bad HTTP request);
``{PORT}`` is its port and ``{LOCAL}`` the router's own ephemeral port.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from graphkit import manifest, seq
from oraclekit import OracleRouter, RawServer, free_port, require_oracle, sequence_graph
from stepserver import Reply, StepServer

from execution.engine import EngineConfig, run_graph_sync
from execution.engine.goports.goerrors import go_quote, go_request_url, go_url_error

_DATA = Path(__file__).parent / "data"
_URLS: list[dict[str, Any]] = json.loads((_DATA / "go_url_errors.json").read_text())
_TRANSPORT: list[dict[str, Any]] = json.loads((_DATA / "go_transport_errors.json").read_text())
_REFUSED = 9  # the port the vectors were recorded with
# Causes Go produces before sending a packet: go_url_error must give them.
_BEFORE_DIAL = re.compile(
    r'^parse "|: unsupported protocol scheme "|: http: no Host in request URL$|: dial tcp: (address|lookup) '
)


def _url(vector: dict[str, Any], step_port: int = 0) -> str:
    return str(vector["url"]).replace("{R}", str(_REFUSED)).replace("{S}", str(step_port))


def _cause(vector: dict[str, Any]) -> str:
    return str(vector["cause"]).replace("{R}", str(_REFUSED))


_PRE_DIAL = [v for v in _URLS if v["status"] == 500 and _BEFORE_DIAL.search(v["cause"])]
_DIALLING = [v for v in _URLS if v not in _PRE_DIAL]


@pytest.mark.parametrize("vector", _PRE_DIAL, ids=[v["url"] for v in _PRE_DIAL])
def test_url_refused_before_dialling_reads_like_go(vector: dict[str, Any]) -> None:
    assert go_url_error(_url(vector)) == _cause(vector)


@pytest.mark.parametrize("vector", _DIALLING, ids=[v["url"] for v in _DIALLING])
def test_url_go_would_dial_is_not_refused_and_prints_like_go(vector: dict[str, Any]) -> None:
    """No pre-dial error, and the URL inside ``Post "…"`` is Go's ``URL.String()``."""
    url = _url(vector, step_port=4321)
    assert go_url_error(url) is None
    if vector["status"] == 500:
        printed = _cause(vector).split(": ", 1)[0]
        assert printed == "Post " + go_quote(go_request_url(url))


_REFUSED_VECTORS = [
    v for v in _DIALLING if "connect: connection refused" in v.get("cause", "") and ":{R}" in v["url"]
]


@pytest.mark.parametrize("vector", _REFUSED_VECTORS, ids=[v["url"] for v in _REFUSED_VECTORS])
def test_engine_cause_for_a_refused_connection(vector: dict[str, Any]) -> None:
    """End to end through the engine, on a port nothing listens on."""
    port = free_port()
    url = str(vector["url"]).replace("{R}", str(port))
    result = run_graph_sync(manifest({"root": seq({"serviceUrl": url})}), b"{}", {}, config=EngineConfig())
    assert (result.status, result.error) == (500, str(vector["cause"]).replace("{R}", str(port)))


def test_go_quote_escapes_like_strconv_quote() -> None:
    assert go_quote('a"b\\c\n\x01\x7fé\u00a0\U0001f600\u200b') == '"a\\"b\\\\c\\n\\x01\\x7fé\\u00a0😀\\u200b"'


def _transport_server(vector: dict[str, Any]) -> RawServer | StepServer:
    if vector.get("server") == "http":
        server = StepServer()
        server.route("/x", Reply(json={"ok": 1}))
        return server
    answer = bytes.fromhex(vector["answer_hex"])
    return RawServer(answer, reset=vector["reset"], read_request=vector["read_request"])


def _transport_id(vector: dict[str, Any]) -> str:
    return str(vector["name"])


def _transport_param(vector: dict[str, Any]) -> Any:
    marks = []
    if "engine_differs" in vector:
        marks.append(pytest.mark.xfail(strict=True, reason=vector["engine_differs"]))
    return pytest.param(vector, id=_transport_id(vector), marks=marks)


@pytest.mark.parametrize("vector", [_transport_param(v) for v in _TRANSPORT])
def test_engine_transport_cause_matches_the_router(vector: dict[str, Any]) -> None:
    """End to end through the engine: a raw server misbehaves, the cause is Go's."""
    with _transport_server(vector) as raw:
        url = f"{vector['scheme']}://127.0.0.1:{raw.port}/x"
        result = run_graph_sync(
            manifest({"root": seq({"serviceUrl": url})}), b"{}", {}, config=EngineConfig()
        )
        port = raw.port
    assert result.status == vector["status"]
    if "cause" in vector:
        pattern = re.escape(vector["cause"].replace("{PORT}", str(port))).replace(
            re.escape("{LOCAL}"), r"\d+"
        )
        assert result.error is not None and re.fullmatch(pattern, result.error), result.error
    else:
        assert result.body == bytes.fromhex(vector["body_hex"])


def test_url_vectors_still_match_the_oracle() -> None:
    """Re-ask KServe's router for every URL vector (skipped without the oracle)."""
    require_oracle()
    differ = []
    with StepServer() as server:
        server.route("/ok", Reply(json={"ok": 1}))
        for vector in _URLS:
            with OracleRouter(sequence_graph(_url(vector, server.port))) as router:
                answer = router.answer(b"{}")
            got = json.loads(answer.body).get("cause") if answer.status == 500 else None
            if answer.status != vector["status"] or (got is not None and got != _cause(vector)):
                differ.append(vector["url"])
    assert differ == []


def test_transport_vectors_still_match_the_oracle() -> None:
    """Re-ask KServe's router for every transport vector (skipped without the oracle)."""
    require_oracle()
    differ = []
    for vector in _TRANSPORT:
        with _transport_server(vector) as raw:
            port = raw.port
            with OracleRouter(sequence_graph(f"{vector['scheme']}://127.0.0.1:{port}/x")) as router:
                answer = router.answer(b"{}")
        if "cause" in vector:
            pattern = re.escape(vector["cause"].replace("{PORT}", str(port))).replace(
                re.escape("{LOCAL}"), r"\d+"
            )
            cause = json.loads(answer.body)["cause"] if answer.status == 500 else ""
            if answer.status != vector["status"] or not re.fullmatch(pattern, cause):
                differ.append(vector["name"])
        elif (answer.status, answer.body) != (vector["status"], bytes.fromhex(vector["body_hex"])):
            differ.append(vector["name"])
    assert differ == []
