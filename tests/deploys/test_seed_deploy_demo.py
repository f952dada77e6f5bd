"""`make run`'s deploy demo: a bare repository and the demo user's target; deploying a demo graph
there puts exactly its export in the repository."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from gitservers import git

from deploys.models import Deployment, DeployTarget
from execution.devtools import demo
from graphs import services as graph_services
from graphs.models import Graph

pytestmark = pytest.mark.django_db


def test_seeded_target_takes_a_deploy_from_the_command_line(
    tmp_path: Path, settings: Any, quick_run_settings: None
) -> None:
    list(demo.seed())
    settings.DEPLOY_FILE_ROOTS = [str(tmp_path / "git")]
    call_command("seed_deploy_demo", str(tmp_path / "git"), stdout=StringIO())
    call_command("seed_deploy_demo", str(tmp_path / "git"), stdout=StringIO())  # idempotent
    assert DeployTarget.objects.get().name == "local-git"

    out = StringIO()
    call_command("deploy", "face-recognition", "--version", "1", "--target", "local-git", stdout=out)

    deployment = Deployment.objects.get()
    assert deployment.status == "pushed" and deployment.created_by.username == demo.DEMO_USER
    clone = tmp_path / "clone"
    git("clone", "-q", str(tmp_path / "git" / "cluster.git"), str(clone))
    graph = Graph.objects.get(name="face-recognition")
    version = graph.versions.get(number=1)
    exported, _ = graph_services.version_export(graph=graph, version=version, fmt="yaml")
    assert (clone / "graphs" / graph.namespace / "face-recognition.yaml").read_text() == exported
