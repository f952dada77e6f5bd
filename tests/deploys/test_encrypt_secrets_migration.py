"""The migration that encrypts deploy targets' credentials encrypts the plaintext rows, and its
reverse decrypts them back."""

from __future__ import annotations

from typing import Any

from cryptography.fernet import Fernet
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from config import secretbox

BEFORE = [("deploys", "0001_initial")]
AFTER = [("deploys", "0002_encrypt_secrets")]


def stored_secrets() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, secret FROM deploys_deploytarget ORDER BY name")
        return {name: secret for name, secret in cursor.fetchall()}


def test_plaintext_rows_are_encrypted_and_the_reverse_restores_them(
    transactional_db: Any, settings: Any
) -> None:
    settings.STUDIO_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Target = old.get_model("deploys", "DeployTarget")
    Target.objects.create(name="plain", url="https://git.example.org/a.git", secret="tok-plaintext")
    Target.objects.create(name="empty", url="https://git.example.org/b.git", secret="")
    try:
        executor.loader.build_graph()
        executor.migrate(AFTER)

        after = stored_secrets()
        assert after["empty"] == ""
        assert after["plain"].startswith("fernet:") and "tok-plaintext" not in after["plain"]
        assert secretbox.decrypt(after["plain"]) == "tok-plaintext"

        executor.loader.build_graph()
        executor.migrate(BEFORE)

        assert stored_secrets() == {"empty": "", "plain": "tok-plaintext"}
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
