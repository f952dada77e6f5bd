from django.urls import path

from execution.suites import apis

urlpatterns = [
    path("graphs/<str:name>/suite-runs/", apis.SuiteRunListCreateApi.as_view(), name="graph-suite-runs"),
    path(
        "graphs/<str:name>/suite-runs/compare/",
        apis.SuiteRunCompareStartApi.as_view(),
        name="graph-suite-runs-compare",
    ),
    path("suite-runs/compare/", apis.SuiteRunCompareApi.as_view(), name="suite-runs-compare"),
    path("suite-runs/<uuid:suite_id>/", apis.SuiteRunDetailApi.as_view(), name="suite-run"),
    path("suite-runs/<uuid:suite_id>/cancel/", apis.SuiteRunCancelApi.as_view(), name="suite-run-cancel"),
    path("suite-runs/<uuid:suite_id>/events/", apis.SuiteRunEventsApi.as_view(), name="suite-run-events"),
]
