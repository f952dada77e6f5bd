"""``import_graph FILE``: bring InferenceGraph YAML/JSON in as a graph (or a new version of one)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from config.exceptions import ApplicationError
from config.files import FileTooLarge, read_capped
from graphs.imports import graph_import
from graphs.language import Issue, describe_issue


class Command(BaseCommand):
    help = "Import an InferenceGraph YAML or JSON file ('-' reads stdin). Exit 1 when nothing was imported."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file")
        parser.add_argument("--name", help="Graph name (default: the manifest's metadata.name)")
        parser.add_argument("--graph", help="Add the manifest as a new version of this existing graph")
        parser.add_argument("--message", default="", help="Version message")
        parser.add_argument("--user", help="Author (default: the first superuser, else the only user)")
        parser.add_argument("--strict", action="store_true", help="Exit 1 when the manifest has errors")

    def handle(self, *args: Any, **opts: Any) -> None:
        source_name = opts["file"]
        try:
            text = read_capped(
                source_name, settings.STUDIO_MAX_MANIFEST_BYTES, "STUDIO_MAX_MANIFEST_BYTES", sys.stdin.buffer
            )
        except FileTooLarge as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise CommandError(f"Cannot read {source_name}: {exc.strerror}") from exc
        User = get_user_model()
        if opts["user"]:
            author = User.objects.filter(username=opts["user"]).first()
            if author is None:
                raise CommandError(f"There is no user named {opts['user']!r}.")
        else:
            author = User.objects.filter(is_superuser=True).order_by("pk").first() or (
                User.objects.get() if User.objects.count() == 1 else None
            )
            if author is None:
                raise CommandError("Say who imports with --user (there is no single obvious user).")
        try:
            result = graph_import(
                source=text,
                owner=author,
                graph_name=opts["graph"],
                name=opts["name"],
                message=opts["message"] or f"Imported from {Path(source_name).name}",
            )
        except ApplicationError as exc:
            for issue in exc.issues:
                self.stderr.write(describe_issue(Issue.from_dict(issue), source_name))
            raise CommandError(exc.detail) from exc
        for issue in result.issues:
            self.stderr.write(describe_issue(Issue.from_dict(issue), source_name))
        for item in result.graphs:
            state = "valid" if item.version.valid else "INVALID (KServe would reject it)"
            verb = "created" if item.created else "unchanged, still"
            self.stdout.write(f"{item.graph}: version {item.version.number} {verb} ({state})")
        if opts["strict"] and any(i["severity"] == "error" for i in result.issues):
            raise CommandError("The manifest has errors (--strict).")
