"""Fail when a source file is over MAX_LINES lines, outside generated code and migrations.

    python scripts/check_file_sizes.py    # `make lint` runs it; exit 1 naming every file over

A file that long holds more than one job; split it by job before it grows. ``ALLOWED`` lists the
files that were over the limit when the check came in, each waiting for its split (named in
docs/architecture.md, "Files and their size"); nothing may join the list, and a file that was
split must leave it (the check says so).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600
SUFFIXES = (".py", ".ts", ".tsx", ".js", ".mjs", ".css", ".sh", ".html")
GENERATED = ("/migrations/", "frontend/src/generated/")

# Files allowed over the limit: none since the mechanical pass split the last ones by job. A file
# that must stay longer (generated code aside) is listed here by name, with its reason.
ALLOWED: frozenset[str] = frozenset()


def counted(path: str) -> bool:
    """Whether the limit applies to ``path`` (a path relative to the repository)."""
    return path.endswith(SUFFIXES) and not any(part in f"/{path}" for part in GENERATED)


def problems(sizes: Mapping[str, int], allowed: Iterable[str] = ALLOWED) -> list[str]:
    """What is wrong with these line counts: a file over the limit that is not allowed, and an
    allowed file that is no longer over it (or gone), which must leave the list."""
    allowed = set(allowed)
    out = [
        f"{path}: {lines} lines, over the {MAX_LINES}-line limit; split it by job"
        for path, lines in sorted(sizes.items())
        if counted(path) and lines > MAX_LINES and path not in allowed
    ]
    out += [
        f"{path}: allowed to be over {MAX_LINES} lines but is not any more; remove it from ALLOWED "
        "in scripts/check_file_sizes.py and from docs/architecture.md"
        for path in sorted(allowed)
        if sizes.get(path, 0) <= MAX_LINES
    ]
    return out


def tracked_sizes() -> dict[str, int]:
    """Line counts of the files git tracks, plus the untracked ones it does not ignore."""
    git = shutil.which("git")
    if git is None:
        raise SystemExit("check_file_sizes: git is not on PATH")
    listed = subprocess.run(  # noqa: S603 (a fixed git command, no input)
        [git, "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    sizes = {}
    for path in listed:
        file = ROOT / path
        if counted(path) and file.is_file():
            with file.open("rb") as handle:
                sizes[path] = sum(1 for _ in handle)
    return sizes


def main() -> int:
    found = problems(tracked_sizes())
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
