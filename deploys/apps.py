from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured


def check_encryption_keys(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A malformed STUDIO_ENCRYPTION_KEYS stops `check` and `migrate` (the migrations Job, the
    pods' wait for it) instead of the first save or deploy of a target's credentials."""
    from config import secretbox

    try:
        secretbox.box()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="deploys.E001")]
    return []


class DeploysConfig(AppConfig):
    name = "deploys"
    verbose_name = "Deploys through Git"

    def ready(self) -> None:
        checks.register(check_encryption_keys, checks.Tags.security)
