"""Seed the demo user, the local environment and the demo graphs once (idempotent)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from execution.devtools import demo


class Command(BaseCommand):
    help = "Create the demo user, the 'local' environment and the demo graphs if they do not exist yet."

    def handle(self, *args: Any, **options: Any) -> None:
        for line in demo.seed():
            self.stdout.write(line)
