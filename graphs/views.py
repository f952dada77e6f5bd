"""Django pages: the graph list and the editor shell that mounts the built frontend bundle."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render

from graphs import selectors


def _studio_config(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    return {
        "apiBase": "/api/",
        "user": request.user.get_username(),
        "csrfToken": get_token(request),
        "logoutUrl": "/logout/",
        **extra,
    }


@login_required
def graph_list_page(request: HttpRequest) -> HttpResponse:
    context = {"studio_config": _studio_config(request), "bundle": "list", "page_title": "Graphs"}
    return render(request, "graphs/app_shell.html", context)


@login_required
def editor_page(request: HttpRequest, name: str) -> HttpResponse:
    graph = selectors.graph_get(name=name, user=request.user)  # type: ignore[arg-type]  # login_required
    raw_version = request.GET.get("version", "")
    version = int(raw_version) if raw_version.isdigit() else None
    config = _studio_config(request, graph=graph.name, version=version)
    context = {"studio_config": config, "bundle": "editor", "page_title": graph.name}
    return render(request, "graphs/app_shell.html", context)
