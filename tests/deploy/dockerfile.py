"""The Dockerfile read as its build stages (no Docker engine runs here to build them)."""

from __future__ import annotations

import re
from pathlib import Path

DOCKERFILE = Path(__file__).resolve().parents[2] / "Dockerfile"


def stages(text: str | None = None) -> dict[str, str]:
    """Each stage's name (``FROM … AS name``) -> its instructions, in the file's order; the last one
    is what ``docker build .`` makes."""
    text = DOCKERFILE.read_text() if text is None else text
    found: dict[str, str] = {}
    parts = re.split(r"^(?=FROM )", text, flags=re.MULTILINE)
    for number, part in enumerate(p for p in parts if p.startswith("FROM ")):
        name = re.match(r"FROM \S+(?: AS (\S+))?", part)
        assert name is not None
        found[name.group(1) or str(number)] = part
    return found


def user(stage: str) -> tuple[int, int | None]:
    """The stage's USER as numbers (uid, gid); fails when it is a name."""
    match = re.search(r"^USER (\d+)(?::(\d+))?$", stage, re.MULTILINE)
    assert match is not None, "the stage's USER is numeric"
    return int(match.group(1)), int(match.group(2)) if match.group(2) else None
