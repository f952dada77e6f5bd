"""``deploy NAME --version N --target T``: commit a version's exported YAML to a deploy target.

The push happens in this process (no worker needed), with the same checks as the API: the gate
(``--force --reason``), the URL guard, drift (the file changed in Git since the last deployment:
nothing is pushed, the diff goes to stderr). Prints the deployment as one JSON object.
Exit 0 when pushed (or pushed for review), 1 when Git or drift refused it, 2 for bad input.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from config.exceptions import ApplicationError
from deploys import selectors, services
from deploys.apis import DeploymentOutputSerializer
from deploys.models import Deployment
from graphs import selectors as graph_selectors


class Command(BaseCommand):
    help = "Deploy a graph version through Git: commit its exported YAML to a deploy target."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        # Our --version is the graph version, not Django's.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--version", dest="number", default="latest", help="Version number or latest")
        parser.add_argument("--target", required=True, help="Deploy target name or id")
        parser.add_argument("--message", default="", help="Added to the commit message")
        parser.add_argument("--user", default=None, help="Deploy as this user (default: the graph's owner)")
        parser.add_argument("--force", action="store_true", help="Deploy although the test gate is closed")
        parser.add_argument("--reason", default="", help="Why the gate is forced (audited)")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            graph = graph_selectors.graph_get(name=opts["name"], user=None)  # type: ignore[arg-type]
            number = opts["number"]
            version = graph_selectors.version_get(
                graph=graph, number=number if number == "latest" else int(number)
            )
            if opts["user"]:
                user = get_user_model().objects.filter(username=opts["user"]).first()
                if user is None:
                    raise CommandError(f"There is no user {opts['user']!r}.")
            else:
                user = graph.owner
            target = selectors.target_find(ref=opts["target"], user=user)  # type: ignore[arg-type]
            deployment = services.deploy_start(
                graph=graph,
                version=version,
                target=target,
                actor=user,  # type: ignore[arg-type]
                message=opts["message"],
                force=opts["force"],
                reason=opts["reason"],
                enqueue=False,
            )
        except ValueError as exc:
            self.stderr.write(f"error: --version must be a number or latest ({exc})")
            sys.exit(2)
        except ApplicationError as exc:
            for issue in exc.issues:
                self.stderr.write(
                    f"{issue.get('severity', 'error')}: [{issue.get('code')}] {issue.get('message')}"
                )
            self.stderr.write(f"error: {exc.detail}")
            sys.exit(2)
        deployment = services.deployment_push(deployment.pk)
        self.stdout.write(json.dumps(DeploymentOutputSerializer(deployment).data, default=str))
        if deployment.status == Deployment.Status.FAILED:
            self.stderr.write(f"error ({deployment.error_kind}): {deployment.error}")
            if deployment.conflict_diff:
                self.stderr.write(json.dumps(deployment.conflict_diff, indent=2))
            sys.exit(1)
