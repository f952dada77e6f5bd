"""``path`` expectations read documents exactly as KServe's gjson (v1.18.0) does: compared with the
recorded answers of ``../shared/oracle/gjson`` everywhere, and with the live oracle where it is.

For each (document, path) of the corpus: ``exists: true`` passes exactly when Go finds the path in
a valid document (KServe's ``ValidBytes && Exists``), ``missing: true`` exactly when it does not,
and ``equals`` with Go's raw value (decoded) passes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from oracle_paths import CORPUS, GJSON, RECORD, record

from execution.casecore import Observed, evaluate_expectation, parse_case
from graphs import language

MANIFEST = language.parse(
    {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "InferenceGraph",
        "metadata": {"name": "g"},
        "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": "http://m.test/"}]}}},
    }
)
RECORDED: list[dict[str, Any]] = json.loads(RECORD.read_text())
PAIRS = [
    pytest.param(
        entry,
        answer,
        id=f"{answer['path']}@{entry['document'][:12]}",
    )
    for entry in RECORDED
    for answer in entry["answers"]
]


def verdicts(document: str, expectations: list[dict[str, Any]]) -> list[bool]:
    case = parse_case({"name": "oracle", "expectations": expectations})
    observed = Observed(status=200, body=document.encode(), duration_ms=1.0)
    return [evaluate_expectation(i, e, observed, MANIFEST).passed for i, e in enumerate(case.expectations)]


@pytest.mark.parametrize(("entry", "answer"), PAIRS)
def test_path_expectations_agree_with_go_gjson(entry: dict[str, Any], answer: dict[str, Any]) -> None:
    found = entry["valid"] and answer["exists"]
    expectations: list[dict[str, Any]] = [
        {"path": answer["path"], "exists": True},
        {"path": answer["path"], "missing": True},
    ]
    if found:
        expectations.append({"path": answer["path"], "equals": json.loads(answer["raw"])})
    assert verdicts(entry["document"], expectations) == [found, not found, *([True] if found else [])]


def test_the_record_covers_the_whole_corpus() -> None:
    assert [(e["document"], [a["path"] for a in e["answers"]]) for e in RECORDED] == [
        (d, p) for d, p in CORPUS
    ]
    assert len(PAIRS) == 51


def test_the_record_is_what_the_live_oracle_answers() -> None:
    if not GJSON.exists():
        pytest.skip(f"the gjson oracle is not at {GJSON} (the recorded answers are checked anyway)")
    assert record() == RECORDED
