"""Deploy targets' credentials encrypted at rest (config/secretbox.py): every plaintext ``secret``
is encrypted with the first configured key; the reverse decrypts them back to plaintext (and
refuses, naming the target, when a value cannot be decrypted with the configured keys)."""

from typing import Any

from django.db import migrations

from config import secretbox


def encrypt_plaintext(apps: Any, schema_editor: Any) -> None:
    DeployTarget = apps.get_model("deploys", "DeployTarget")
    for target in DeployTarget.objects.exclude(secret="").only("pk", "secret"):
        if not secretbox.is_encrypted(target.secret):
            DeployTarget.objects.filter(pk=target.pk).update(secret=secretbox.encrypt(target.secret))


def decrypt_to_plaintext(apps: Any, schema_editor: Any) -> None:
    DeployTarget = apps.get_model("deploys", "DeployTarget")
    for target in DeployTarget.objects.exclude(secret="").only("pk", "name", "secret"):
        if not secretbox.is_encrypted(target.secret):
            continue
        try:
            plaintext = secretbox.decrypt(target.secret)
        except secretbox.Unreadable:
            raise RuntimeError(
                f"The credentials of deploy target {target.name!r} cannot be decrypted with the "
                "configured keys: list the key they were encrypted with in STUDIO_ENCRYPTION_KEYS, "
                "or clear them, before reversing this migration."
            ) from None
        DeployTarget.objects.filter(pk=target.pk).update(secret=plaintext)


class Migration(migrations.Migration):
    dependencies = [("deploys", "0001_initial")]

    operations = [migrations.RunPython(encrypt_plaintext, decrypt_to_plaintext)]
