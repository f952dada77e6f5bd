from django.urls import path

from deploys import apis

urlpatterns = [
    path("deploy-targets/", apis.DeployTargetListCreateApi.as_view(), name="deploy-targets"),
    path("deploy-targets/<dbint:pk>/", apis.DeployTargetDetailApi.as_view(), name="deploy-target"),
    path("deployments/live/", apis.LiveDeploymentListApi.as_view(), name="deployments-live"),
    path(
        "graphs/<str:name>/versions/<version:number>/deploy/",
        apis.GraphVersionDeployApi.as_view(),
        name="graph-version-deploy",
    ),
    path("graphs/<str:name>/deployments/", apis.GraphDeploymentListApi.as_view(), name="graph-deployments"),
    path(
        "graphs/<str:name>/deployments/<dbint:pk>/import-drift/",
        apis.GraphDeploymentImportDriftApi.as_view(),
        name="graph-deployment-import-drift",
    ),
]
