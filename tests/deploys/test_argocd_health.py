"""The Argo CD health check for InferenceGraph (docs/integrations/argocd/health.lua), run by a
real Lua runtime (lupa) on the status fixtures its health_test.yaml lists, as Argo CD runs it:
the resource as the global ``obj``, the script's chunk returning ``{status, message}``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from lupa import LuaRuntime

HERE = Path(__file__).resolve().parents[2] / "docs" / "integrations" / "argocd"
CASES = yaml.safe_load((HERE / "health_test.yaml").read_text())["tests"]


def health(resource: dict[str, Any]) -> dict[str, Any]:
    lua = LuaRuntime(unpack_returned_tuples=True)
    lua.globals().obj = lua.table_from(resource, recursive=True)
    result = lua.execute((HERE / "health.lua").read_text())
    return dict(result.items())


@pytest.mark.parametrize("case", CASES, ids=[Path(c["inputPath"]).stem for c in CASES])
def test_health_of_each_fixture(case: dict[str, Any]) -> None:
    resource = yaml.safe_load((HERE / case["inputPath"]).read_text())

    assert health(resource) == case["healthStatus"]


def test_the_three_states_are_covered() -> None:
    assert {c["healthStatus"]["status"] for c in CASES} == {"Healthy", "Progressing", "Degraded"}


def test_other_failing_conditions_join_the_message() -> None:
    resource = yaml.safe_load((HERE / "testdata" / "degraded.yaml").read_text())
    resource["status"]["conditions"].append(
        {"type": "RouterReady", "status": "False", "reason": "ImagePullBackOff"}
    )

    result = health(resource)

    assert result["status"] == "Degraded"
    assert result["message"].endswith("; RouterReady (ImagePullBackOff)")
