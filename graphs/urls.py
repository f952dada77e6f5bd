from django.urls import path

from graphs import apis

urlpatterns = [
    path("graphs/", apis.GraphListCreateApi.as_view(), name="graph-list"),
    path("graphs/import/", apis.GraphImportApi.as_view(), name="graph-import"),
    path("graphs/<str:name>/", apis.GraphDetailApi.as_view(), name="graph-detail"),
    path("graphs/<str:name>/restore/", apis.GraphRestoreApi.as_view(), name="graph-restore"),
    path("graphs/<str:name>/versions/", apis.GraphVersionListCreateApi.as_view(), name="graph-versions"),
    path(
        "graphs/<str:name>/versions/<version:number>/",
        apis.GraphVersionDetailApi.as_view(),
        name="graph-version",
    ),
    path(
        "graphs/<str:name>/versions/<version:number>/rollback/",
        apis.GraphVersionRollbackApi.as_view(),
        name="graph-version-rollback",
    ),
    path(
        "graphs/<str:name>/versions/<version:number>/export/",
        apis.GraphVersionExportApi.as_view(),
        name="graph-version-export",
    ),
    path(
        "graphs/<str:name>/versions/<version:number>/upgrade-report/",
        apis.GraphVersionUpgradeReportApi.as_view(),
        name="graph-version-upgrade-report",
    ),
    path("graphs/<str:name>/diff/", apis.GraphDiffApi.as_view(), name="graph-diff"),
    path("graphs/<str:name>/members/", apis.GraphMemberListCreateApi.as_view(), name="graph-members"),
    path(
        "graphs/<str:name>/members/<str:username>/", apis.GraphMemberDeleteApi.as_view(), name="graph-member"
    ),
    path("graphs/<str:name>/audit/", apis.GraphAuditListApi.as_view(), name="graph-audit"),
    path("validate/", apis.ValidateApi.as_view(), name="validate"),
    path("tokens/", apis.ApiTokenListCreateApi.as_view(), name="tokens"),
    path("tokens/<dbint:pk>/", apis.ApiTokenDeleteApi.as_view(), name="token"),
]
