"""The frontend's event types are generated from the one declaration (execution/eventschema.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from execution.eventschema import INT, RUN_EVENTS, STR, EventFamily, EventType, Field
from scripts import export_event_types


def test_the_committed_typescript_is_what_the_declaration_generates() -> None:
    committed = export_event_types.TARGET.read_text(encoding="utf-8")
    assert committed == export_event_types.render(), (
        "frontend/src/generated/events.ts is out of date: run python scripts/export_event_types.py"
    )


def test_it_lists_every_event_type_and_the_terminal_one() -> None:
    text = export_event_types.render()
    for event in RUN_EVENTS.events:
        assert f'  "{event.name}": {export_event_types.data_interface(event)};' in text
    assert 'export const RUN_TERMINAL_EVENT = "run.finished" as const;' in text


def test_the_check_mode_tells_an_outdated_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "events.ts"
    stale.write_text("// an older declaration\n", encoding="utf-8")
    monkeypatch.setattr(export_event_types, "TARGET", stale)
    monkeypatch.setattr(export_event_types, "ROOT", tmp_path)
    assert export_event_types.main(["--check"]) == 1
    assert export_event_types.main([]) == 0 and export_event_types.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == export_event_types.render()


def test_the_script_runs_on_its_own() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/export_event_types.py", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_another_family_is_declared_the_same_way() -> None:
    """A suite run's events, say: a family of its own with its terminal event and its own names."""
    suite = EventFamily(
        name="suite",
        doc="a suite run's events",
        events=(
            EventType("suite.started", "the suite began", "worker", (Field("cases", INT, "how many"),)),
            EventType("suite.finished", "the suite ended", "worker", (), terminal=True),
        ),
    )
    assert suite.terminal == "suite.finished" and suite.names == ("suite.started", "suite.finished")
    assert suite.trace_names() == ()  # the engine reports none of them


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        (
            (EventType("a.x", "", "web", ()), EventType("a.y", "", "web", ())),
            "exactly one event type must be terminal",
        ),
        (
            (EventType("a.x", "", "web", (), terminal=True), EventType("a.x", "", "web", ())),
            "declared twice",
        ),
        (
            (EventType("a.x", "", "engine", (Field("call_id", STR, "again"),), terminal=True),),
            "a field is declared twice (or is a common one)",
        ),
    ],
)
def test_a_family_that_contradicts_itself_is_refused(events: tuple[EventType, ...], problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        EventFamily("a", "", events, common=(Field("call_id", STR, "where"),), common_sources=("engine",))
