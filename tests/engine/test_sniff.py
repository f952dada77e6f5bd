"""Content-Type of the router's answers: Go's ``json.Valid`` then Go 1.19's ``DetectContentType``.

Every vector in ``data/sniff.json`` was recorded from KServe's router (a Sequence root passing a
step's bytes through): ``body_hex`` is what the step answered, ``content_type`` what the router sent
(null: no header). ``test_vectors_still_match_the_oracle`` re-records them where the oracle exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from oraclekit import OracleRouter, require_oracle, sequence_graph

from execution.engine.goports.sniff import response_content_type, sniff_content_type

_VECTORS: list[dict[str, Any]] = json.loads((Path(__file__).parent / "data" / "sniff.json").read_text())


@pytest.mark.parametrize("vector", _VECTORS, ids=[v["name"] for v in _VECTORS])
def test_content_type_matches_the_router(vector: dict[str, Any]) -> None:
    assert response_content_type(bytes.fromhex(vector["body_hex"])) == vector["content_type"]


def test_empty_body_gets_no_content_type() -> None:
    assert response_content_type(b"") is None
    assert sniff_content_type(b"") is None


def test_only_the_first_512_bytes_are_sniffed() -> None:
    assert sniff_content_type(b"a" * 512 + b"\x00") == "text/plain; charset=utf-8"
    assert sniff_content_type(b"a" * 511 + b"\x00") == "application/octet-stream"


def test_valid_json_is_application_json_whatever_it_looks_like() -> None:
    assert response_content_type(b' "<html>" ') == "application/json"


def test_vectors_still_match_the_oracle(server: Any) -> None:
    """Re-ask KServe's router for every recorded vector (skipped without the oracle)."""
    require_oracle()
    from stepserver import Reply

    url = server.route("/x", Reply(body=b"", content_type=None))
    differ = []
    with OracleRouter(sequence_graph(url)) as router:
        for vector in _VECTORS:
            body = bytes.fromhex(vector["body_hex"])
            server.route("/x", Reply(body=body, content_type=None))
            answer = router.answer(b"{}")
            if (answer.status, answer.body, answer.content_type) != (200, body, vector["content_type"]):
                differ.append((vector["name"], answer.content_type))
    assert differ == []
