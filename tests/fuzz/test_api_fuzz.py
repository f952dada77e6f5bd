"""Schemathesis against our own OpenAPI schema: no 5xx and no response that breaks the schema.

Every operation gets ``FUZZ_EXAMPLES`` generated cases (200 in CI; ``make fuzz`` runs 1,000),
sent over HTTP to a live server with a real token, against a database holding a real graph.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from tests.conftest import SEQUENCE_MANIFEST

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db(transaction=True)]

# The event stream is a long-lived response (it follows a run until it ends): fuzzed separately
# by the events tests, not by a tool that waits for a body.
schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True)).exclude(
    path_regex=r"/events/$"
)


@pytest.fixture
def token(user: Any) -> str:
    from rest_framework.authtoken.models import Token

    from graphs import services

    services.graph_create(owner=user, manifest=SEQUENCE_MANIFEST)
    return Token.objects.get_or_create(user=user)[0].key


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_errors_and_responses_match_the_schema(case: Any, live_server: Any, token: str) -> None:
    case.call_and_validate(
        base_url=live_server.url,
        headers={"Authorization": f"Token {token}"},
        checks=[not_a_server_error, response_schema_conformance, content_type_conformance],
    )
