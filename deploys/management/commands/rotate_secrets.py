"""``rotate_secrets``: re-encrypt every deploy target's stored credentials with the first key of
STUDIO_ENCRYPTION_KEYS (config/secretbox.py), after a new key was put first; plaintext ones (from
before encryption, or an older process) are encrypted. Each re-encrypted target is audited as
``deploy_target.reencrypt``. A value no configured key decrypts is left as it is and named on
stderr; the command then exits 1 (the others are re-encrypted all the same).

``rotate_secrets --derived-key`` prints the key derived from the current SECRET_KEY (what
encrypts while STUDIO_ENCRYPTION_KEYS is unset), to list before SECRET_KEY changes.
"""

from __future__ import annotations

import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction

from config import secretbox
from deploys.errors import UnreadableCredentials
from deploys.models import DeployTarget
from graphs import services as graph_services


class Command(BaseCommand):
    help = "Re-encrypt deploy targets' stored credentials with the first key of STUDIO_ENCRYPTION_KEYS."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--derived-key",
            action="store_true",
            help="Print the key derived from the current SECRET_KEY instead (list it before SECRET_KEY changes)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["derived_key"]:
            self.stdout.write(secretbox.derived_key(settings.SECRET_KEY))
            return
        done, unreadable = 0, []
        for target in DeployTarget.objects.exclude(secret="").order_by("pk"):
            try:
                stored = secretbox.reencrypt(target.secret)
            except secretbox.Unreadable:
                unreadable.append(target.name)
                continue
            with transaction.atomic():
                # Only when unchanged meanwhile: new credentials saved since the read are kept.
                unchanged = DeployTarget.objects.filter(pk=target.pk, secret=target.secret)
                updated = unchanged.update(secret=stored)
                if updated:
                    graph_services.audit(
                        None,
                        "deploy_target.reencrypt",
                        deploy_target=target.pk,
                        deploy_target_name=target.name,
                        credentials="*** (re-encrypted with the first key)",
                    )
            done += updated
        self.stdout.write(f"Re-encrypted the credentials of {done} deploy target(s) with the first key.")
        for name in unreadable:
            self.stderr.write(f"error: {UnreadableCredentials(name).detail}")
        if unreadable:
            sys.exit(1)
