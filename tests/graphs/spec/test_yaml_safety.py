"""Every YAML reader in the project is a safe one: ``yaml.safe_load`` or a SafeLoader subclass,
never ``yaml.load`` with the full or unsafe loader (which build Python objects from tags)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SKIPPED = {".venv", ".venv-models", "node_modules", ".git", "frontend", "dist", "build"}

UNSAFE = re.compile(
    r"\byaml\.(?:load|load_all|full_load|full_load_all|unsafe_load|unsafe_load_all|add_constructor)\s*\("
    r"|\b(?:Unsafe|Full)Loader\b"
    r"|\byaml\.C?Loader\b"
    r"|\bfrom\s+yaml\s+import\s+[^\n]*\b(?:load|load_all|full_load|unsafe_load|Loader|CLoader)\b"
)


def python_files() -> list[Path]:
    found = []
    for path in ROOT.rglob("*.py"):
        if not SKIPPED.intersection(path.relative_to(ROOT).parts):
            found.append(path)
    return found


def test_no_module_loads_yaml_with_an_unsafe_loader() -> None:
    files = python_files()
    assert len(files) > 100, len(files)  # the walk found the project
    offenders = [
        f"{path.relative_to(ROOT)}:{text[: match.start()].count(chr(10)) + 1}: {match.group()}"
        for path in files
        if path != Path(__file__).resolve()
        for text in [path.read_text(encoding="utf-8", errors="replace")]
        for match in UNSAFE.finditer(text)
    ]
    assert not offenders, offenders


def test_the_pattern_finds_what_it_should() -> None:
    for line in (
        "yaml.load(text)",
        "yaml.load(text, Loader=yaml.FullLoader)",
        "yaml.unsafe_load(x)",
        "from yaml import load, Loader",
        "class L(yaml.Loader): ...",
    ):
        assert UNSAFE.search(line), line
    for line in (
        "yaml.safe_load(text)",
        "yaml.CSafeLoader",
        "class L(yaml.SafeLoader): ...",
        "loader.load()",
    ):
        assert not UNSAFE.search(line), line
