"""A liveness signal for Celery workers: a file whose modification time the worker's consumer
refreshes every ``ALIVE_FILE_INTERVAL`` seconds while it runs.

``celery inspect ping`` as a probe starts a whole Celery client and a broker round trip every
period and fails whenever Redis is slow; this costs one ``stat``. The file is touched by a timer of
the consumer (on the worker's event loop with the Redis broker), so it goes stale when the consumer
stops consuming: wedged, or disconnected from the broker and not coming back. The Kubernetes
liveness probe (deploy/kubernetes/base/worker.yaml) fails when the file is older than a minute.

On with ``WORKER_ALIVE_FILE`` (``STUDIO_WORKER_ALIVE_FILE``); off by default, as ``make run`` has
its own supervisor. A file left by a previous container in the same pod is removed when the worker
starts, so only this worker's consumer can make the probe pass.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Final

from celery import bootsteps

# Seconds between touches: six per minute, so the probe's 60 s threshold tolerates a few late ones.
ALIVE_FILE_INTERVAL: Final = 10.0


class AliveFile(bootsteps.StartStopStep):
    """Consumer bootstep: touch the file at start, then every ``ALIVE_FILE_INTERVAL`` seconds."""

    # After the consumer's task consumer exists: the file says the worker takes tasks.
    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        from django.conf import settings

        path = getattr(settings, "WORKER_ALIVE_FILE", "")
        self.path = Path(path) if path else None
        self.tref: Any = None
        super().__init__(parent, **kwargs)
        self.enabled = self.path is not None
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def touch(self) -> None:
        assert self.path is not None
        self.path.touch()
        os.utime(self.path)

    def start(self, parent: Any) -> None:
        self.touch()
        self.tref = parent.timer.call_repeatedly(ALIVE_FILE_INTERVAL, self.touch)

    def stop(self, parent: Any) -> None:
        # The file stays: a consumer restarting after a broker hiccup keeps the worker alive for
        # the probe's threshold, and one that does not come back lets the file go stale.
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None
