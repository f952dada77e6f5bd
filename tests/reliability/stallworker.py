"""A Celery worker whose run task waits ``STALL_SECONDS`` (60) before it claims the run. Killed in
that wait, it leaves the run queued and the task's message unacknowledged, as a worker that dies
between taking a message and claiming its run does (the broker gives the message back only after
its visibility timeout).

    python tests/reliability/stallworker.py -A config.celery_app worker --pool=threads ...

takes the ``celery`` command's arguments.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def install() -> None:
    import django

    django.setup()
    from execution.services import worker

    run_execute = worker.run_execute

    def stalled(*, run_id: str) -> str:
        time.sleep(float(os.environ.get("STALL_SECONDS", "60")))
        return run_execute(run_id=run_id)

    worker.run_execute = stalled


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    install()
    from celery.__main__ import main

    sys.argv = ["celery", *sys.argv[1:]]
    main()
