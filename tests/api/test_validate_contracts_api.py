"""Edge contracts through the API: ``POST /api/validate/`` and a saved version's ``issues`` carry
``contract.*`` warnings (never errors, so validity is unchanged); ``services`` (what a Test
connection found) makes them precise."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def chain(name: str = "chain") -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": name},
        "spec": {
            "nodes": {
                "root": {
                    "routerType": "Sequence",
                    "steps": [
                        {
                            "name": "detect",
                            "serviceUrl": "http://detector.default.svc/v1/models/detector:predict",
                        },
                        {"name": "classify", "serviceName": "classifier", "data": "$response"},
                    ],
                }
            }
        },
    }


def test_validate_warns_of_predictions_passed_as_instances(api: APIClient) -> None:
    services = {"classifier": {"protocol": "v1"}}
    response = api.post("/api/validate/", {"manifest": chain(), "services": services}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True
    [issue] = [i for i in body["issues"] if i["code"].startswith("contract.")]
    assert issue["code"] == "contract.predictions-to-instances" and issue["severity"] == "warning"
    assert (issue["node"], issue["step"], issue["path"]) == ("root", 1, "spec.nodes.root.steps[1].data")


def test_validate_uses_the_services_a_probe_found(api: APIClient) -> None:
    services = {
        "http://detector.default.svc/v1/models/detector:predict": {
            "protocol": "v2",
            "outputs": [{"name": "boxes", "datatype": "FP32", "shape": [-1, 4]}],
        },
        "classifier": {"protocol": "v2", "inputs": [{"name": "image", "datatype": "UINT8", "shape": [-1]}]},
    }
    response = api.post("/api/validate/", {"manifest": chain(), "services": services}, format="json")
    codes = [i["code"] for i in response.json()["issues"] if i["code"].startswith("contract.")]
    assert codes == ["contract.tensor-mismatch"]
    none = api.post("/api/validate/", {"manifest": chain()}, format="json").json()["issues"]
    assert not [i for i in none if i["code"].startswith("contract.")]  # classifier's protocol unknown
    bad = api.post(
        "/api/validate/", {"manifest": chain(), "services": {"a": {"protocol": "v9"}}}, format="json"
    )
    assert bad.status_code == 400


def test_a_saved_version_keeps_the_contract_warnings_and_stays_valid(api: APIClient) -> None:
    manifest = chain()
    manifest["spec"]["nodes"]["root"]["steps"][1] = {
        "name": "classify",
        "serviceUrl": "http://classifier.default.svc/v2/models/classifier/infer",
        "data": "$response",
    }
    response = api.post("/api/graphs/", {"name": "chain", "manifest": manifest}, format="json")
    assert response.status_code == 201, response.json()
    version = response.json()["latest_version"]
    assert version["valid"] is True
    assert [i["code"] for i in version["issues"]] == ["contract.protocol-mismatch"]


def test_anonymous_validation_is_refused(anon: APIClient) -> None:
    assert anon.post("/api/validate/", {"manifest": chain()}, format="json").status_code in (401, 403)
