"""The studio's icon, at ``/favicon.ico`` where browsers look for it on every page (the API docs,
the admin, a JSON answer opened in a tab) and linked from the studio's own pages. An SVG, which
browsers take at that address as well; public, like the login page it also shows on."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

# Three linked dots: a graph.
ICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<circle cx="4" cy="8" r="3" fill="#4f46e5"/>'
    '<circle cx="12" cy="4" r="2.5" fill="#0ea5e9"/>'
    '<circle cx="12" cy="12" r="2.5" fill="#0ea5e9"/>'
    "</svg>"
)


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(ICON_SVG, content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response
