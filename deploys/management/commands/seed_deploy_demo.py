"""``seed_deploy_demo DIR``: a bare Git repository DIR/cluster.git and the demo user's deploy
target ``local-git`` pointing at it (file://), so that `make run` can deploy without a Git server.
Idempotent; DIR must be inside DEPLOY_FILE_ROOTS for a deploy to be allowed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from dulwich.repo import Repo

from deploys import targets
from deploys.models import DeployTarget
from execution.devtools.demo import DEMO_USER

TARGET = "local-git"


class Command(BaseCommand):
    help = "Create a local bare Git repository and the demo user's deploy target for it."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("directory")

    def handle(self, *args: Any, **opts: Any) -> None:
        repository = Path(opts["directory"]).resolve() / "cluster.git"
        if not repository.exists():
            repository.mkdir(parents=True)
            Repo.init_bare(str(repository), default_branch=b"main")
            self.stdout.write(f"Created the bare repository {repository}.")
        user = get_user_model().objects.filter(username=DEMO_USER).first()
        if user is None or DeployTarget.objects.filter(name=TARGET).exists():
            return
        targets.target_create(
            owner=user,  # type: ignore[arg-type]
            name=TARGET,
            description="A bare repository on this machine (make run); clone it to see what was deployed.",
            url=repository.as_uri(),
        )
        self.stdout.write(f"Created the deploy target {TARGET!r} -> {repository.as_uri()}")
