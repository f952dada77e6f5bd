"""Every 413 names the setting that sets its limit, so whoever meets it knows what to raise:
``STUDIO_MAX_REQUEST_BYTES`` for a request body (checked by the middleware from Content-Length, and
by the JSON parser while reading), ``STUDIO_MAX_MANIFEST_BYTES`` for a manifest or a test file,
``STUDIO_MAX_IMPORT_DOCUMENTS`` for the documents of one import."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.test import Client
from rest_framework.test import APIClient

from graphs.models import Graph

pytestmark = pytest.mark.django_db


def _refused(response: Any, setting: str) -> None:
    assert response.status_code == 413, response.content[:300]
    body = response.json()
    assert setting in body["detail"], body
    assert setting in body["issues"][0]["message"], body


def test_a_body_over_the_request_cap_names_studio_max_request_bytes(api: APIClient, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"manifest": {"padding": "x" * 2000}})
    _refused(api.post("/api/graphs/", body, content_type="application/json"), "STUDIO_MAX_REQUEST_BYTES")


def test_the_middleware_names_it_for_any_page(user: Any, settings: Any) -> None:
    """Before any view or parser: a form post to the login page meets the same cap."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = Client().post("/login/", {"username": "x" * 2000})
    _refused(response, "STUDIO_MAX_REQUEST_BYTES")
    assert "1000 bytes" in response.json()["detail"]


def test_a_manifest_over_its_cap_names_studio_max_manifest_bytes(
    api: APIClient, manifest: dict[str, Any], settings: Any
) -> None:
    settings.STUDIO_MAX_MANIFEST_BYTES = 2000
    big = {**manifest, "metadata": {**manifest["metadata"], "annotations": {"pad": "x" * 3000}}}
    _refused(api.post("/api/graphs/", {"manifest": big}, format="json"), "STUDIO_MAX_MANIFEST_BYTES")
    text = yaml.safe_dump(big)
    _refused(
        api.post("/api/graphs/import/", text, content_type="application/yaml"), "STUDIO_MAX_MANIFEST_BYTES"
    )
    assert not Graph.objects.exists()


def test_too_many_documents_names_studio_max_import_documents(
    api: APIClient, manifest: dict[str, Any], settings: Any
) -> None:
    settings.STUDIO_MAX_IMPORT_DOCUMENTS = 2
    docs = []
    for i in range(3):
        doc = {**manifest, "metadata": {"name": f"g{i}"}}
        docs.append(yaml.safe_dump(doc))
    response = api.post("/api/graphs/import/", "---\n".join(docs), content_type="application/yaml")
    _refused(response, "STUDIO_MAX_IMPORT_DOCUMENTS")
    assert not Graph.objects.exists()


def test_a_test_file_over_its_cap_names_studio_max_manifest_bytes(
    api: APIClient, manifest: dict[str, Any], settings: Any
) -> None:
    assert api.post("/api/graphs/", {"manifest": manifest}, format="json").status_code == 201
    settings.STUDIO_MAX_MANIFEST_BYTES = 1000
    text = "kind: InferenceGraphTest\n# " + "x" * 2000
    response = api.post("/api/graphs/model-chainer/tests/import/", text, content_type="application/yaml")
    _refused(response, "STUDIO_MAX_MANIFEST_BYTES")
