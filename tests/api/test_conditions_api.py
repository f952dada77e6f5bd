"""The condition evaluator endpoint answers as KServe's gjson v1.18.0 does."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

URL = "/api/conditions/evaluate/"


def evaluate(api: APIClient, document: object, condition: str) -> dict[str, object]:
    response = api.post(URL, {"document": document, "condition": condition}, format="json")
    assert response.status_code == 200, response.content
    body: dict[str, object] = response.json()
    return body


def test_modifiers_and_literals_answer_as_go(api: APIClient) -> None:
    """``a|@keys`` and ``!true`` give Go's Exists and Raw (recorded from oracle/gjson)."""
    body = evaluate(api, '{"a": {"b": 1}}', "a|@keys")
    assert (body["matches"], body["raw"], body["value"]) == (True, '["b"]', ["b"])
    body = evaluate(api, {"x": 1}, "!true")
    assert (body["matches"], body["raw"], body["value"]) == (True, "true", True)


def test_raw_keeps_the_documents_spelling(api: APIClient) -> None:
    """A text document's matched slice comes back as written (spaces, number spelling)."""
    body = evaluate(api, '{"a": [1, 2.50]}', "a")
    assert body["raw"] == "[1, 2.50]"


def test_a_document_deeper_than_the_studio_limit_is_refused_naming_it(api: APIClient) -> None:
    """400,000 nested '[' as raw text: a clear 400 pinned to the field (the API's nesting limit),
    and the server stays up."""
    for document in ("[" * 400_000, "[" * 50_000 + "]" * 50_000):
        response = api.post(URL, {"document": document, "condition": "@this"}, format="json")
        assert response.status_code == 400, response.content[:300]
        assert [(i["code"], i["path"]) for i in response.json()["issues"]] == [
            ("request.too-deep", "document")
        ]
    assert evaluate(api, {"ok": True}, "ok")["matches"] is True
