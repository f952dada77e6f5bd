from django.urls import path

from execution.cases import apis

urlpatterns = [
    path("graphs/<str:name>/tests/", apis.CaseListCreateApi.as_view(), name="graph-tests"),
    path("graphs/<str:name>/tests/export/", apis.CaseExportApi.as_view(), name="graph-tests-export"),
    path("graphs/<str:name>/tests/import/", apis.CaseImportApi.as_view(), name="graph-tests-import"),
    path("graphs/<str:name>/tests/<dbint:pk>/", apis.CaseDetailApi.as_view(), name="graph-test"),
    path("runs/<uuid:run_id>/save-as-test/", apis.RunSaveAsTestApi.as_view(), name="run-save-as-test"),
]
