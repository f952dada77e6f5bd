from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.urls import include, path, re_path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from config.auth import RateLimitedLoginView, StudioLogoutView, admin_login
from config.exceptions import API_NOT_FOUND_URL_NAME, api_not_found
from config.favicon import favicon
from config.params import DbIntConverter, VersionConverter
from config.sso import oidc as sso_oidc
from deploys import views as deploy_views
from execution.metrics import metrics_view
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
# <version:…>: a version number as <dbint:…>, or "latest" for the graph's newest version.
register_converter(VersionConverter, "version")

urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("", graph_views.graph_list_page, name="graph-list-page"),
    path("graphs/<str:name>/", graph_views.editor_page, name="editor-page"),
    path("environments/", graph_views.environments_page, name="environments-page"),
    path("tokens/", graph_views.tokens_page, name="tokens-page"),
    path("deploy-targets/", deploy_views.deploy_targets_page, name="deploy-targets-page"),
    path("login/", RateLimitedLoginView.as_view(), name="login"),
    path("logout/", StudioLogoutView.as_view(), name="logout"),
    # Single sign-on with OpenID Connect (config/sso): 404 while it is not configured. The callback
    # is the redirect URI to register at the provider.
    path(
        "oidc/authenticate/",
        sso_oidc.StudioOIDCAuthenticationRequestView.as_view(),
        name="oidc_authentication_init",
    ),
    path("oidc/callback/", sso_oidc.StudioOIDCCallbackView.as_view(), name="oidc_authentication_callback"),
    path("admin/login/", admin_login),  # before admin.site.urls: see config.auth.admin_login
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The docs are pages for people: signed out, they lead to the login page instead of a bare 403.
    path("api/docs/", login_required(SpectacularSwaggerView.as_view(url_name="schema")), name="api-docs"),
    path("api/redoc/", login_required(redoc_page), name="api-redoc"),
    path("api/", include("graphs.urls")),
    path("api/", include("execution.urls")),
    path("api/", include("execution.cases.urls")),
    path("api/", include("execution.suites.urls")),
    path("api/", include("execution.loadtests.urls")),
    path("api/", include("deploys.urls")),
    # Last: any other path under /api/ is the API's JSON 404, also with DEBUG on.
    re_path(r"^api/(?P<rest>.*)$", api_not_found, name=API_NOT_FOUND_URL_NAME),
]
