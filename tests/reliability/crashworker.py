"""A Celery worker that dies of SIGSEGV, as a crash in native code kills it, when a step of the run
it executes answers a body starting with :data:`POISON`. Test-only: it stands in for the crash
that native JSON validation (pygjson) used to cause on hostile step responses, so the reaper's
handling of a poison run can be tested whatever the engine parses with.

    python tests/reliability/crashworker.py -A config.celery_app worker --pool=threads ...

takes the ``celery`` command's arguments. It wraps the worker's write of trace events
(``_storing``, on the task thread: the first of our code to see a step's answer), so the process
dies mid-attempt with the run claimed and its step in flight, exactly where a native crash would
leave it.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

POISON = "POISON: this answer crashes the worker"


def install() -> None:
    import django

    django.setup()
    from execution.services import worker

    storing = worker._Execution._storing

    def crash_on_poison(self: Any, trace: list[Any], **kwargs: Any) -> Any:
        for event in trace:
            response = event.data.get("response") if event.type == "step.finished" else None
            if isinstance(response, dict) and str(response.get("body", "")).startswith(POISON):
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file in the tree
                os.kill(os.getpid(), signal.SIGSEGV)
        return storing(self, trace, **kwargs)

    worker._Execution._storing = crash_on_poison  # type: ignore[method-assign]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    install()
    from celery.__main__ import main

    sys.argv = ["celery", *sys.argv[1:]]
    main()
