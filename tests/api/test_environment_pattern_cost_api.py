"""An environment's header propagation pattern is matched against every client header name on
every step call: one whose RE2 program is too large is refused when the environment is saved."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

# Under the 500 characters a pattern may have, and without a comma (KServe splits on those):
# ~17,000 instructions, ~8 s per search of a 16 KiB header name.
PATHOLOGICAL = "([ab]?){99}" * 44 + "!"


def body(pattern: str) -> dict[str, Any]:
    return {"name": "costly", "propagate_headers": ["^X-Request-Id$", pattern]}


def test_a_costly_header_pattern_is_refused_naming_the_setting(api: APIClient) -> None:
    response = api.post("/api/environments/", body(PATHOLOGICAL), format="json")
    assert response.status_code == 400, response.json()
    (issue,) = response.json()["issues"]
    assert issue["path"] == "propagate_headers[1]"
    assert "HEADER_PATTERN_MAX_PROGRAM" in issue["message"]


def test_a_normal_header_pattern_is_accepted(api: APIClient) -> None:
    assert (
        api.post("/api/environments/", body("^X-(Tenant|User)-[A-Za-z]+$"), format="json").status_code == 201
    )
