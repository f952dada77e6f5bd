"""What a worker thread remembers of its work, so that it need not read it back: the run it has
just executed (its ending and the events its attempt stored; a suite run judges its case from it)
and the parsed manifests of the versions its process ran lately."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from execution.models import Run, RunEvent
from graphs import language


@dataclass(frozen=True)
class EndedRun:
    """A run this thread has just executed to its end, as its ending wrote it: the run with its
    final fields, the events its attempt stored (in order) and its parsed manifest."""

    run: Run
    events: tuple[RunEvent, ...]
    manifest: language.Manifest


_ENDED_HERE = threading.local()


def ended_here(run_id: str) -> EndedRun | None:
    """The run ``run_id``, if it is the last one this thread executed and this thread wrote its
    ending (None otherwise: then read it from the database). Given once."""
    ended: EndedRun | None = getattr(_ENDED_HERE, "run", None)
    _ENDED_HERE.run = None
    return ended if ended is not None and str(ended.run.pk) == str(run_id) else None


def forget() -> None:
    _ENDED_HERE.run = None


def remember(run: Run, stored: Iterable[list[RunEvent]], manifest: language.Manifest) -> None:
    """``run`` has ended here, its ending written by this thread; ``stored``: the events of each of
    its attempt's committed writes."""
    events = sorted((event for batch in stored for event in batch), key=lambda e: e.seq)
    _ENDED_HERE.run = EndedRun(run=run, events=tuple(events), manifest=manifest)


# The parsed manifests of the versions this process ran lately (versions never change once saved):
# a suite run's cases all run one version, parsed once, not per case. Keyed by the version's id,
# spec hash and save time: an id alone can be given again to another version (a flushed or restored
# database, a reset sequence), and that version must not run the old one's manifest.
_ManifestKey = tuple[int, str, datetime | None]
_MANIFESTS: dict[_ManifestKey, language.Manifest] = {}
_MANIFESTS_LOCK = threading.Lock()
_MANIFESTS_KEPT = 64


def manifest_of(run: Run) -> language.Manifest:
    """The parsed manifest of ``run``'s version."""
    version = run.version
    key = (version.pk, version.spec_hash, version.created_at)
    with _MANIFESTS_LOCK:
        manifest = _MANIFESTS.get(key)
    if manifest is None:
        manifest = language.manifest_from_document(version.manifest)
        with _MANIFESTS_LOCK:
            if len(_MANIFESTS) >= _MANIFESTS_KEPT:
                _MANIFESTS.clear()
            _MANIFESTS[key] = manifest
    return manifest
