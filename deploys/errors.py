"""What deploying through Git refuses, named for what went wrong (each an ``ApplicationError``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from config.exceptions import ApplicationError, BadRequest, Conflict, Forbidden, NotFound


class InvalidTarget(BadRequest):
    """A deploy target's fields, or a deploy request, cannot be used as given."""


class ForbiddenHost(BadRequest):
    """The repository's host is one the URL guard refuses (loopback, private, metadata) and the
    target's allow list does not name it, or a file:// path outside DEPLOY_FILE_ROOTS."""


class NotPermitted(Forbidden):
    """The user may see the target or graph but not do this (change it, deploy with it)."""


class NoSuchTarget(NotFound):
    """No deploy target or deployment of that id or name that the user may see."""


class DriftConflict(Conflict):
    """The file at the branch head changed since the last deployment (edited by hand in Git)."""


class UnreadableCredentials(Conflict):
    """The target's stored credentials cannot be decrypted with the configured keys (409, code
    ``credentials``): they were encrypted with a key that is no longer listed."""

    def __init__(self, target_name: str, *, extra: Mapping[str, Any] | None = None) -> None:
        super().__init__(
            f"The credentials of deploy target {target_name!r} cannot be decrypted with the configured "
            "keys (the encryption key changed): enter the credentials again, or list the old key in "
            "STUDIO_ENCRYPTION_KEYS.",
            extra={"code": "credentials", **(extra or {})},
        )


class GitFailed(ApplicationError):
    """The Git server could not be reached or refused: 502, with what went wrong (``code``)."""

    status_code = 502
