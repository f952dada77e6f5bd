from django.urls import path

from execution import apis, environment_apis

urlpatterns = [
    path("conditions/evaluate/", apis.ConditionEvaluateApi.as_view(), name="conditions-evaluate"),
    path("environments/", environment_apis.EnvironmentListCreateApi.as_view(), name="environments"),
    path("environments/<dbint:pk>/", environment_apis.EnvironmentDetailApi.as_view(), name="environment"),
    path(
        "environments/<dbint:pk>/probe/",
        environment_apis.EnvironmentProbeApi.as_view(),
        name="environment-probe",
    ),
    path("services/", environment_apis.ServiceCatalogApi.as_view(), name="services"),
    path("graphs/<str:name>/runs/", apis.RunListCreateApi.as_view(), name="graph-runs"),
    path("runs/<uuid:run_id>/", apis.RunDetailApi.as_view(), name="run"),
    path("runs/<uuid:run_id>/trace/", apis.RunTraceApi.as_view(), name="run-trace"),
    path("runs/<uuid:run_id>/steps/", apis.RunStepListApi.as_view(), name="run-steps"),
    path("runs/<uuid:run_id>/rerun/", apis.RunRerunApi.as_view(), name="run-rerun"),
    path("runs/<uuid:run_id>/cancel/", apis.RunCancelApi.as_view(), name="run-cancel"),
    path("runs/<uuid:run_id>/events/", apis.RunEventsApi.as_view(), name="run-events"),
]
