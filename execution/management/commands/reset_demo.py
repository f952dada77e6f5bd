"""Wipe the demo's SQLite database and seed it again (``make reset-demo``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from execution.devtools import demo


def default_database() -> Path:
    """The only database this command may wipe: the SQLite file ``make run`` uses when
    ``DATABASE_URL`` is not set (``config.settings``: ``BASE_DIR / "db.sqlite3"``)."""
    return Path(settings.BASE_DIR) / "db.sqlite3"


class Command(BaseCommand):
    help = (
        "Delete every row of the default SQLite database (db.sqlite3: graphs, runs, users, "
        "environments) and seed the demo again. Refuses any other database."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        database = settings.DATABASES["default"]
        name = str(database.get("NAME", ""))
        if (
            database["ENGINE"] != "django.db.backends.sqlite3"
            or Path(name).resolve() != default_database().resolve()
        ):
            raise CommandError(
                f"reset_demo only wipes the default SQLite database ({default_database()}); this "
                f"studio uses {database['ENGINE'].rsplit('.', 1)[-1]} {name!r} (DATABASE_URL). "
                "Nothing was changed."
            )
        # The rows are deleted, not the file: a studio that is running keeps its open database
        # and sees the fresh demo at once (a deleted file would live on under the running processes).
        call_command("flush", interactive=False, verbosity=0)
        self.stdout.write(f"Wiped {name}.")
        for line in demo.seed():
            self.stdout.write(line)
