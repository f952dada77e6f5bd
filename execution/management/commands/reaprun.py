"""``python manage.py reaprun``: run the stuck-run reaper once (Celery beat runs it every 15 s)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand

from execution.services import reaper


class Command(BaseCommand):
    help = "Fail, cancel or requeue runs whose worker died; re-send queued runs nobody picked up."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(json.dumps(reaper.reap_runs().as_dict()))
