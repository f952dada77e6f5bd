from django.urls import path

from execution.cases import apis

urlpatterns = [
    path("graphs/<str:name>/tests/", apis.TestCaseListCreateApi.as_view(), name="graph-tests"),
    path("graphs/<str:name>/tests/export/", apis.TestCaseExportApi.as_view(), name="graph-tests-export"),
    path("graphs/<str:name>/tests/import/", apis.TestCaseImportApi.as_view(), name="graph-tests-import"),
    path("graphs/<str:name>/tests/<dbint:pk>/", apis.TestCaseDetailApi.as_view(), name="graph-test"),
    path("runs/<uuid:run_id>/save-as-test/", apis.RunSaveAsTestApi.as_view(), name="run-save-as-test"),
]
