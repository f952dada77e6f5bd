"""Deploy targets' credentials encrypted at rest (config/secretbox.py): Fernet under the keys of
STUDIO_ENCRYPTION_KEYS (the first encrypts, all decrypt) or one derived from SECRET_KEY, and
``manage.py rotate_secrets`` re-encrypting every stored secret with the first key."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import connection

from config import secretbox
from deploys import targets
from deploys.errors import UnreadableCredentials
from graphs.models import AuditEvent

KEY_A = Fernet.generate_key().decode()
KEY_B = Fernet.generate_key().decode()
PASSWORD = "tok-rotate-me"


def stored_secret(pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM deploys_deploytarget WHERE id = %s", [pk])
        return str(cursor.fetchone()[0])


def test_a_value_is_stored_with_its_prefix_and_read_back(settings: Any) -> None:
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_A]

    stored = secretbox.encrypt(PASSWORD)

    assert stored.startswith("fernet:") and PASSWORD not in stored
    assert secretbox.decrypt(stored) == PASSWORD
    assert secretbox.encrypt(PASSWORD) != stored  # a fresh IV each time
    assert secretbox.encrypt("") == "" and secretbox.decrypt("") == ""


def test_a_plaintext_value_is_read_as_it_is(settings: Any) -> None:
    """Rows written before the migration, or by an older process during a rolling upgrade."""
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_A]

    assert not secretbox.is_encrypted(PASSWORD)
    assert secretbox.decrypt(PASSWORD) == PASSWORD
    assert secretbox.is_encrypted(secretbox.reencrypt(PASSWORD))


def test_without_keys_the_key_comes_from_secret_key(settings: Any) -> None:
    settings.STUDIO_ENCRYPTION_KEYS = []
    settings.SECRET_KEY = "first-secret-key-for-this-test"
    stored = secretbox.encrypt(PASSWORD)
    assert secretbox.decrypt(stored) == PASSWORD
    derived = secretbox.derived_key("first-secret-key-for-this-test")
    assert Fernet(derived.encode()).decrypt(stored.removeprefix("fernet:").encode()).decode() == PASSWORD

    settings.SECRET_KEY = "a-new-secret-key-after-rotation"
    with pytest.raises(secretbox.Unreadable):
        secretbox.decrypt(stored)
    # Listing the old derived key keeps the value readable after SECRET_KEY changed.
    settings.STUDIO_ENCRYPTION_KEYS = [derived]
    assert secretbox.decrypt(stored) == PASSWORD


def test_a_malformed_key_is_a_configuration_error_that_does_not_show_it(settings: Any) -> None:
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_A, "not-a-fernet-key"]

    with pytest.raises(ImproperlyConfigured, match="entry 2 of STUDIO_ENCRYPTION_KEYS") as raised:
        secretbox.encrypt(PASSWORD)
    assert "not-a-fernet-key" not in str(raised.value)


@pytest.mark.django_db
def test_rotation_reads_under_both_keys_and_reencrypts_with_the_first(settings: Any, user: Any) -> None:
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_A]
    target = targets.target_create(
        owner=user,
        name="prod",
        url="https://git.example.org/platform/cluster-config.git",
        credentials={"username": "bot", "password": PASSWORD},
    )
    plain = targets.target_create(owner=user, name="nocreds", url="https://git.example.org/other.git")
    under_a = stored_secret(target.pk)

    settings.STUDIO_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    target.refresh_from_db()
    assert targets.credentials_password(target) == PASSWORD
    out = StringIO()
    call_command("rotate_secrets", stdout=out)

    under_b = stored_secret(target.pk)
    assert under_b != under_a and under_b.startswith("fernet:")
    assert "1 deploy target" in out.getvalue()
    assert stored_secret(plain.pk) == ""
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_B]
    target.refresh_from_db()
    assert targets.credentials_password(target) == PASSWORD
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_A]
    with pytest.raises(UnreadableCredentials):
        targets.credentials_password(target)
    audit = AuditEvent.objects.filter(action="deploy_target.reencrypt").values_list("details", flat=True)
    assert [d["deploy_target_name"] for d in audit] == ["prod"]
    assert PASSWORD not in str(list(audit))


@pytest.mark.django_db
def test_rotation_reports_what_it_cannot_read_and_rotates_the_rest(settings: Any, user: Any) -> None:
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_A]
    lost = targets.target_create(
        owner=user, name="lost", url="https://git.example.org/a.git", credentials={"password": "x-lost"}
    )
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_B]
    kept = targets.target_create(
        owner=user, name="kept", url="https://git.example.org/b.git", credentials={"password": "x-kept"}
    )
    before = stored_secret(kept.pk), stored_secret(lost.pk)
    err = StringIO()

    with pytest.raises(SystemExit) as exit_info:
        call_command("rotate_secrets", stdout=StringIO(), stderr=err)

    assert exit_info.value.code == 1
    assert "'lost'" in err.getvalue() and "enter the credentials again" in err.getvalue()
    assert stored_secret(lost.pk) == before[1]
    assert stored_secret(kept.pk) != before[0]
    kept.refresh_from_db()
    assert targets.credentials_password(kept) == "x-kept"


def test_the_derived_key_is_printed_for_listing_before_secret_key_changes(settings: Any) -> None:
    settings.SECRET_KEY = "the-current-secret-key"
    out = StringIO()

    call_command("rotate_secrets", "--derived-key", stdout=out)

    assert out.getvalue().strip() == secretbox.derived_key("the-current-secret-key")


def test_manage_py_check_names_a_malformed_key(settings: Any) -> None:
    """`migrate` and `check` (the migrations Job, the pods' wait for it) refuse to start with one."""
    from django.core.management.base import SystemCheckError

    settings.STUDIO_ENCRYPTION_KEYS = ["not-a-fernet-key", KEY_A]
    with pytest.raises(SystemCheckError, match=r"deploys\.E001.*entry 1 of STUDIO_ENCRYPTION_KEYS"):
        call_command("check", stdout=StringIO(), stderr=StringIO())
    settings.STUDIO_ENCRYPTION_KEYS = [KEY_A]
    call_command("check", stdout=StringIO(), stderr=StringIO())
