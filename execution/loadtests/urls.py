from django.urls import path

from execution.loadtests import apis

urlpatterns = [
    path("graphs/<str:name>/load-tests/", apis.LoadTestListCreateApi.as_view(), name="graph-load-tests"),
    path(
        "graphs/<str:name>/versions/<version:number>/budget-check/",
        apis.BudgetCheckApi.as_view(),
        name="graph-version-budget-check",
    ),
    path("load-tests/compare/", apis.LoadTestCompareApi.as_view(), name="load-tests-compare"),
    path("load-tests/<uuid:load_id>/", apis.LoadTestDetailApi.as_view(), name="load-test"),
    path("load-tests/<uuid:load_id>/cancel/", apis.LoadTestCancelApi.as_view(), name="load-test-cancel"),
    path("load-tests/<uuid:load_id>/events/", apis.LoadTestEventsApi.as_view(), name="load-test-events"),
]
