"""Step answers as Go's client hands them to KServe's router: Content-Encoding and size caps.

``tests/engine/data/oracle_encodings.json`` holds what ``../shared/oracle/kserve-router`` answered
for each ``oracle_vectors.ENCODING_CASES`` entry.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from graphkit import manifest, seq
from oracle_vectors import ENCODING_CASES, ask_encodings, encoded_reply, encoding_answer
from oraclekit import require_oracle
from stepserver import Reply, StepServer

from execution.engine import EngineConfig, UrlGuard, run_graph_sync
from execution.engine.headers import split_patterns

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent / "data" / "oracle_encodings.json").read_text()
)


@pytest.mark.parametrize("case", sorted(ENCODING_CASES))
def test_content_encodings_reach_the_graph_as_in_kserves_router(case: str, server: StepServer) -> None:
    """gzip is decoded only when Go asked for it; other encodings pass through as bytes."""
    _, _, propagate, headers = ENCODING_CASES[case]
    server.route("/", encoded_reply(case))
    config = EngineConfig(
        propagate_headers=split_patterns(propagate) if propagate is not None else (),
        guard=UrlGuard(allow_loopback=True),
        step_timeout=10,
    )
    result = run_graph_sync(
        manifest({"root": seq({"serviceUrl": server.url("/")})}), b"{}", headers, config=config
    )
    assert encoding_answer(result.status, result.body) == VECTORS[case]


def test_the_recorded_encoding_answers_are_what_the_oracle_answers_today() -> None:
    require_oracle()
    assert ask_encodings() == VECTORS


def test_a_small_gzip_body_cannot_expand_past_the_size_cap(server: StepServer) -> None:
    """20 MB of zeros compress to about 20 kB; the cap applies to the decoded bytes."""
    bomb = gzip.compress(b"0" * 20_000_000, mtime=0)
    server.route("/", Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    url = server.url("/")
    config = EngineConfig(guard=UrlGuard(allow_loopback=True), max_response_bytes=1_000_000, step_timeout=10)
    result = run_graph_sync(manifest({"root": seq({"serviceUrl": url})}), b"{}", {}, config=config)
    assert len(bomb) < 1_000_000
    assert (result.status, result.error) == (
        500,
        f'Post "{url}": response body exceeds the engine\'s 1000000-byte limit',
    )
    assert json.loads(result.body)["error"] == "Failed to process request"
