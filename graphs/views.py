"""Django pages: the graph list, the editor, environments and API tokens, each the shell that
mounts its built frontend bundle."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render

from config.exceptions import NotFound
from config.params import parse_db_int
from graphs import selectors


def studio_config(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    """What every page's frontend bundle reads at start (the API's base, the user, the CSRF token,
    the logout URL), with the page's own ``extra`` values; the pages of other apps use it too."""
    return {
        "apiBase": "/api/",
        "user": request.user.get_username(),
        "csrfToken": get_token(request),
        "logoutUrl": "/logout/",
        **extra,
    }


@login_required
def graph_list_page(request: HttpRequest) -> HttpResponse:
    context = {"studio_config": studio_config(request), "bundle": "list", "page_title": "Graphs"}
    return render(request, "graphs/app_shell.html", context)


@login_required
def editor_page(request: HttpRequest, name: str) -> HttpResponse:
    """The editor of graph ``name``; 404 when there is none. ``?version=`` opens a version read-only
    (anything but a version number is ignored: the page opens the latest)."""
    try:
        graph = selectors.graph_get(name=name, user=request.user)  # type: ignore[arg-type]  # login_required
    except NotFound as exc:  # the API's error; a page answers Django's 404 page
        raise Http404(exc.detail) from exc
    version = parse_db_int(request.GET.get("version", ""))
    config = studio_config(request, graph=graph.name, version=version)
    context = {"studio_config": config, "bundle": "editor", "page_title": graph.name}
    return render(request, "graphs/app_shell.html", context)


@login_required
def environments_page(request: HttpRequest) -> HttpResponse:
    """The environments page: list, create, change and delete the environments the user may use
    (the API decides; the page only mirrors its rules). ``isStaff`` lets the page disable what
    only staff may do (share an environment, change the system default) and say why."""
    user = request.user
    config = studio_config(request, isStaff=bool(user.is_staff or user.is_superuser))
    context = {"studio_config": config, "bundle": "environments", "page_title": "Environments"}
    return render(request, "graphs/app_shell.html", context)


@login_required
def tokens_page(request: HttpRequest) -> HttpResponse:
    """The API tokens page: create a personal token (its key shown once, with a ready ``curl``
    line), list and revoke them. ``siteUrl`` is this site's address, for that line."""
    config = studio_config(request, siteUrl=request.build_absolute_uri("/").rstrip("/"))
    context = {"studio_config": config, "bundle": "tokens", "page_title": "API tokens"}
    return render(request, "graphs/app_shell.html", context)
