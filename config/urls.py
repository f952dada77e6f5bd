from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.auth import RateLimitedLoginView
from config.params import DbIntConverter
from graphs import views as graph_views

# <dbint:…> in the apps' routes: ids and version numbers a database column can hold (else 404).
register_converter(DbIntConverter, "dbint")

urlpatterns = [
    path("", graph_views.graph_list_page, name="graph-list-page"),
    path("graphs/<str:name>/", graph_views.editor_page, name="editor-page"),
    path("login/", RateLimitedLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/", include("graphs.urls")),
    path("api/", include("execution.urls")),
]
