from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.urls import include, path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from config.auth import RateLimitedLoginView
from config.params import DbIntConverter
from graphs import views as graph_views


def redoc_page(request: HttpRequest) -> HttpResponse:
    """ReDoc from our static files. Its sidebar shows the vendor's logo from their CDN: the page's
    Content-Security-Policy keeps that (and anything else) from leaving the machine."""
    response: HttpResponse = _redoc(request)
    response["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        "script-src 'self' 'unsafe-inline'; worker-src 'self' blob:"
    )
    return response


_redoc = SpectacularRedocView.as_view(url_name="schema", template_name="api/redoc.html")

# A URL no route matches answers the API's error shape under /api/ (config.exceptions).
handler404 = "config.exceptions.page_not_found"

# <dbint:…> in the apps' routes: ids and version numbers a database column can hold (else 404).
register_converter(DbIntConverter, "dbint")

urlpatterns = [
    path("", graph_views.graph_list_page, name="graph-list-page"),
    path("graphs/<str:name>/", graph_views.editor_page, name="editor-page"),
    path("environments/", graph_views.environments_page, name="environments-page"),
    path("login/", RateLimitedLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The docs are pages for people: signed out, they lead to the login page instead of a bare 403.
    path("api/docs/", login_required(SpectacularSwaggerView.as_view(url_name="schema")), name="api-docs"),
    path("api/redoc/", login_required(redoc_page), name="api-redoc"),
    path("api/", include("graphs.urls")),
    path("api/", include("execution.urls")),
    path("api/", include("execution.testcases.urls")),
    path("api/", include("execution.suites.urls")),
]
