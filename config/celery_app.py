"""The Celery application. Workers start with ``celery -A config.celery_app worker``."""

import functools
import logging
import os
from typing import Any

from celery import Celery, bootsteps
from celery.worker import consumer

from config.worker_liveness import AliveFile

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

logger = logging.getLogger(__name__)

app = Celery("studio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The liveness file for Kubernetes (config/worker_liveness.py); does nothing unless configured.
app.steps["consumer"].add(AliveFile)


class ReapOnConnect(bootsteps.StartStopStep):
    """Each time a worker (re)connects to the broker, it asks for a pass of the reaper at once.

    A broker that restarted without persistence lost every message it held; the reaper sends
    those runs again (and the ones a refused send left unsent). Beat would ask within
    RUN_REAPER_SECONDS anyway; this makes it seconds after the broker is back. Extra passes are
    harmless: the reaper's every change is conditional."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, parent: Any) -> None:
        try:
            parent.app.send_task("execution.reap_runs")
        except Exception:  # the broker went again: the next reconnection asks again
            logger.warning("could not ask for a reaper pass after connecting", exc_info=True)


app.steps["consumer"].add(ReapOnConnect)


class MetricsHeartbeat(bootsteps.StartStopStep):
    """The worker's heartbeat in /metrics: the time, written to Redis at start and every
    ``WORKER_HEARTBEAT_SECONDS`` by the consumer's timer (so it stops when the consumer does)."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        self.tref: Any = None
        super().__init__(parent, **kwargs)

    def start(self, parent: Any) -> None:
        from django.conf import settings

        from execution.metrics import record_worker_heartbeat

        def beat() -> None:
            record_worker_heartbeat(parent.hostname)

        beat()
        self.tref = parent.timer.call_repeatedly(settings.WORKER_HEARTBEAT_SECONDS, beat)

    def stop(self, parent: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None


app.steps["consumer"].add(MetricsHeartbeat)

# Seconds between a worker's attempts to reach a broker that went away.
RECONNECT_SECONDS = 1.0


class Consumer(consumer.Consumer):
    """The worker's consumer (``CELERY_WORKER_CONSUMER``), which tries to reach a lost broker every
    :data:`RECONNECT_SECONDS`: Celery's own waits 2, 4, 6 … 30 s between attempts, so a worker came
    back up to 30 s after Redis did, and runs waited for it. An attempt is one connection to a
    broker that is down, refused at once: cheap. It tries for as long as it takes
    (``CELERY_BROKER_CONNECTION_MAX_RETRIES``: None), rather than exiting after 100 attempts."""

    def ensure_connected(self, conn: Any) -> Any:
        conn.ensure_connection = functools.partial(
            conn.ensure_connection,
            interval_start=RECONNECT_SECONDS,
            interval_step=0,
            interval_max=RECONNECT_SECONDS,
        )
        return super().ensure_connected(conn)
