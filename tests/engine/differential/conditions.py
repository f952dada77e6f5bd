"""The condition pool checked directly: Go gjson (``oracle/gjson``) against the engine's evaluator.

Every condition of :data:`pools.CONDITIONS` is evaluated on every document a generated graph
can evaluate it on (each request body and each fixed step answer): the oracle's ``Exists()`` and
``ValidBytes`` against :func:`execution.engine.conditions.evaluate_condition` and
:func:`execution.engine.is_valid_json`. A graph divergence that uses one of the disagreeing
conditions is classed under that condition, which is far more precise than its status pair.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from execution.engine import is_valid_json
from execution.engine.conditions import evaluate_condition
from tests.engine.differential.generator import CONDITIONS, REQUEST_BODIES
from tests.engine.differential.stepserver import BEHAVIOURS

__all__ = ["ConditionDivergence", "check_conditions", "documents"]

_LINE: Final = re.compile(r" exists=(true|false) +raw=")


@dataclass(frozen=True, slots=True)
class ConditionDivergence:
    """``condition`` on ``document``: what Go gjson says and what the engine says.

    ``condition`` is None for a validity disagreement (``gjson.ValidBytes`` vs ``is_valid_json``).
    """

    document: bytes
    condition: str | None
    oracle: bool
    engine: bool | str

    def show(self) -> str:
        what = "valid JSON" if self.condition is None else f"condition {self.condition!r} exists"
        return f"{what} on {self.document!r}: gjson {self.oracle}, engine {self.engine}"


def documents() -> list[bytes]:
    """Every document a generated condition can be evaluated on, without duplicates."""
    docs = list(REQUEST_BODIES)
    for behaviour in BEHAVIOURS.values():
        answer = behaviour(b"", {})
        if not answer.close:
            docs.append(answer.body)
    docs += [b'{"loop":1}', b'{"loop":2}', b'{"done":true}']  # countdown answers
    # A program argument cannot hold a NUL byte; such bodies are not JSON anyway.
    return [doc for doc in dict.fromkeys(docs) if b"\x00" not in doc]


def _engine(document: bytes, condition: str) -> bool | str:
    try:
        return evaluate_condition(document, condition).matches
    except Exception as exc:  # a crash of the evaluator is a divergence too, not a test error
        return f"raised {type(exc).__name__}: {exc}"


def check_conditions(gjson: Path) -> list[ConditionDivergence]:
    """Ask ``gjson`` about every (document, condition) pair; return where the engine disagrees."""
    out: list[ConditionDivergence] = []
    for doc in documents():
        result = subprocess.run([str(gjson), doc, *CONDITIONS], capture_output=True, check=True, timeout=30)
        lines = result.stdout.decode("utf-8", "replace").splitlines()
        valid = lines[0].strip() == "ValidBytes=true"
        if valid != is_valid_json(doc):
            out.append(ConditionDivergence(doc, None, valid, is_valid_json(doc)))
        if not valid:
            continue  # Switch and Sequence only evaluate conditions on valid JSON
        rows = lines[1:]
        if len(rows) != len(CONDITIONS):
            raise RuntimeError(f"gjson printed {len(rows)} rows for {len(CONDITIONS)} paths")
        for condition, row in zip(CONDITIONS, rows, strict=True):
            match = _LINE.search(row)
            if match is None:
                raise RuntimeError(f"unreadable gjson row: {row!r}")
            exists = match.group(1) == "true"
            engine = _engine(doc, condition)
            if engine is not exists:
                out.append(ConditionDivergence(doc, condition, exists, engine))
    return out
