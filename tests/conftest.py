"""Fixtures shared by the Django-side tests: users, authenticated API clients, manifests."""

from __future__ import annotations

import copy
from typing import Any

import pytest

# Django and DRF are imported inside the fixtures: the pure-core suites (tests/graphs/spec,
# tests/engine) share this conftest and must run without Django settings (-p no:django).

SEQUENCE_MANIFEST: dict[str, Any] = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "model-chainer"},
    "spec": {
        "nodes": {
            "root": {
                "routerType": "Sequence",
                "steps": [
                    {"name": "sklearn-iris", "serviceName": "sklearn-iris"},
                    {"name": "xgboost-iris", "serviceName": "xgboost-iris", "data": "$request"},
                ],
            }
        }
    },
}


@pytest.fixture
def manifest() -> dict[str, Any]:
    """A valid two-step Sequence (KServe's docs/samples/graph/sequence.yaml)."""
    return copy.deepcopy(SEQUENCE_MANIFEST)


@pytest.fixture
def user(db: Any) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def other_user(db: Any) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("bob", password="bob-password-1")


def client_for(user: Any) -> Any:
    """An APIClient authenticated with ``user``'s DRF token."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def api(user: Any) -> Any:
    """An API client authenticated as ``alice`` with a DRF token."""
    return client_for(user)


@pytest.fixture
def bob_api(other_user: Any) -> Any:
    return client_for(other_user)


@pytest.fixture
def anon() -> Any:
    from rest_framework.test import APIClient

    return APIClient()
