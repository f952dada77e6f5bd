"""The GJSON path corpus of ``path`` expectations, and what Go gjson v1.18.0 answers for it.

``python tests/graphtests/oracle_paths.py`` asks ``../shared/oracle/gjson`` (KServe's gjson
version) about every (document, path) pair and rewrites ``data/oracle_paths.json``; the tests
compare the studio's ``path`` expectations with that record everywhere, and with the live oracle
where it exists.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GJSON = ROOT.parent / "shared" / "oracle" / "gjson"
RECORD = Path(__file__).resolve().parent / "data" / "oracle_paths.json"

PREDICTIONS = json.dumps(
    {
        "predictions": [
            {"label": "cat", "score": 0.93, "box": [1, 2, 3, 4]},
            {"label": "dog", "score": 0.41, "box": [5, 6, 7, 8]},
        ],
        "model_name": "pets",
        "id": "r-1",
        "meta": {"a.b": 1, "empty": {}, "none": None, "flag": False, "zero": 0, "text": ""},
    }
)
V2 = json.dumps(
    {
        "model_name": "resnet",
        "outputs": [{"name": "probs", "shape": [1, 3], "datatype": "FP32", "data": [0.1, 0.7, 0.2]}],
    }
)
FACES = json.dumps(
    {"faces": [], "employees": [{"name": "Ann", "id": 7}], "count": 1e2, "big": 12345678901234567890}
)

CORPUS: list[tuple[str, list[str]]] = [
    (
        PREDICTIONS,
        [
            "predictions",
            "predictions.0.label",
            "predictions.1.score",
            "predictions.#",
            "predictions.#.label",
            "predictions.2.label",
            "predictions.-1",
            "predictions.0.box.3",
            'predictions.#(label=="dog").score',
            'predictions.#(label=="horse").score',
            "predictions.#(score>0.5)#.label",
            "predictions.#(score>0.95)#",
            "predictions|@reverse|0.label",
            "model_name",
            "Model_Name",
            "mod*",
            "model_nam?",
            "id",
            "meta.a\\.b",
            "meta.a.b",
            "meta.empty",
            "meta.none",
            "meta.flag",
            "meta.zero",
            "meta.text",
            "meta.absent",
            "@this",
            '[@this].#(id=="r-1")',
            "{model_name,id}",
            "predictions.0.@keys",
        ],
    ),
    (
        V2,
        [
            "outputs.0.data",
            "outputs.0.data.1",
            'outputs.#(name=="probs").datatype',
            "outputs.0.shape.#",
            "outputs.0.data|@reverse",
        ],
    ),
    (FACES, ["faces", "faces.#", "faces.0", "employees.0.name", "employees.#(id==7).name", "count", "big"]),
    ("not json", ["a", "@this"]),
    ('{"a":1', ["a"]),
    ("[1,2,3]", ["0", "#", "@this", "1"]),
    ('"text"', ["@this", "0"]),
]

_LINE = re.compile(r'^(".*?")\s+exists=(true|false)\s+raw=(".*")$')


def ask(document: str, paths: list[str]) -> dict[str, Any]:
    """``{"valid": bool, "answers": [{"path", "exists", "raw"}]}`` from the gjson oracle."""
    out = subprocess.run(
        [str(GJSON), document, *paths], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    lines = out.splitlines()
    valid = lines[0] == "ValidBytes=true"
    answers = []
    for line, path in zip(lines[1:], paths, strict=True):
        match = _LINE.match(line)
        assert match is not None, line
        assert json.loads(match.group(1)) == path
        answers.append({"path": path, "exists": match.group(2) == "true", "raw": json.loads(match.group(3))})
    return {"valid": valid, "answers": answers}


def record() -> list[dict[str, Any]]:
    return [{"document": document, **ask(document, paths)} for document, paths in CORPUS]


if __name__ == "__main__":
    RECORD.write_text(json.dumps(record(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {RECORD}")
