"""The task that pushes one deployment to its Git repository (``deploys.services.deployment_push``).

It takes the deployment id only; receiving it twice is harmless (a deployment that is not pending
is left as it is). Each Git network operation is bounded by DEPLOY_GIT_TIMEOUT."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from deploys import services


@shared_task(
    name=services.PUSH_TASK,
    acks_late=True,
    ignore_result=True,
    soft_time_limit=4 * settings.DEPLOY_GIT_TIMEOUT + 10,
    time_limit=4 * settings.DEPLOY_GIT_TIMEOUT + 20,
)
def push_deployment_task(deployment_id: int) -> str:
    return services.deployment_push(deployment_id).status
