"""scripts/check_file_sizes.py: no source file over the limit unless it is on the allowance list."""

from __future__ import annotations

from scripts import check_file_sizes as sizes


def test_a_new_file_over_the_limit_is_named() -> None:
    found = sizes.problems({"execution/new.py": 601, "execution/ok.py": 600}, allowed=[])
    assert found == ["execution/new.py: 601 lines, over the 600-line limit; split it by job"]


def test_generated_code_and_migrations_do_not_count() -> None:
    assert (
        sizes.problems(
            {
                "frontend/src/generated/api.ts": 5000,
                "execution/migrations/0001_initial.py": 900,
                "notes.md": 900,
            },
            allowed=[],
        )
        == []
    )


def test_an_allowed_file_that_was_split_must_leave_the_list() -> None:
    found = sizes.problems({"graphs/apis.py": 400}, allowed=["graphs/apis.py", "gone.py"])
    assert [line.split(":")[0] for line in found] == ["gone.py", "graphs/apis.py"]


def test_the_tree_passes_today() -> None:
    assert sizes.problems(sizes.tracked_sizes()) == []
