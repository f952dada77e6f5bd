"""The deploy targets page: the shell that mounts its built frontend bundle."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from graphs.views import studio_config


@login_required
def deploy_targets_page(request: HttpRequest) -> HttpResponse:
    """List, create, change and delete the deploy targets the user may use (the API decides)."""
    user = request.user
    config = studio_config(request, isStaff=bool(user.is_staff or user.is_superuser))
    context = {"studio_config": config, "bundle": "deploytargets", "page_title": "Deploy targets"}
    return render(request, "graphs/app_shell.html", context)
