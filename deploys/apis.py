"""The deploy API: deploy targets, deploying a version, a graph's deployments (with drift) and
importing a change made in Git. One thin view per operation; services and selectors decide."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.pagination import paginate, paginated
from config.params import VersionRef
from config.types import AuthedRequest as Request
from deploys import selectors, services, targets
from deploys.models import Deployment, DeployTarget
from graphs import selectors as graph_selectors
from graphs.serializers import VersionOutputSerializer


class DeployTargetOutputSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", allow_null=True, default=None)
    has_credentials = serializers.SerializerMethodField(
        help_text="Whether credentials are set (they are never answered)"
    )
    username = serializers.CharField(help_text="The user name of the credentials (not a secret)")

    class Meta:
        model = DeployTarget
        fields = [
            "id",
            *targets.TARGET_FIELDS,
            "username",
            "has_credentials",
            "owner",
            "created_at",
            "updated_at",
        ]

    def get_has_credentials(self, obj: DeployTarget) -> bool:
        return bool(obj.secret)


class CredentialsInput(serializers.Serializer):
    username = serializers.CharField(required=False, allow_blank=True, max_length=200)
    password = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=10_000,
        trim_whitespace=False,
        help_text="A password or token",
    )


class DeployTargetInput(serializers.Serializer):
    name = serializers.RegexField(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$", max_length=63)
    description = serializers.CharField(required=False, allow_blank=True, max_length=10_000)
    url = serializers.CharField(
        max_length=1000, help_text="file://, git://, http(s):// or ssh:// repository URL"
    )
    branch = serializers.CharField(required=False, max_length=200)
    path = serializers.CharField(
        required=False, max_length=500, help_text="Path template: {namespace} and {name} are replaced"
    )
    mode = serializers.ChoiceField(choices=DeployTarget.Mode.choices, required=False)
    author_name = serializers.CharField(required=False, max_length=200)
    author_email = serializers.CharField(required=False, max_length=200)
    credentials = CredentialsInput(
        required=False, help_text="Write-only: never answered, never logged, redacted in the audit log"
    )
    allow_hosts = serializers.ListField(
        child=serializers.CharField(max_length=253), required=False, max_length=100
    )
    visibility = serializers.ChoiceField(
        choices=DeployTarget.Visibility.choices,
        required=False,
        help_text="private (default): only you (and staff); shared (staff only): everyone",
    )


class DeploymentOutputSerializer(serializers.ModelSerializer):
    graph = serializers.CharField(source="graph.name")
    version = serializers.IntegerField(source="version.number")
    target = serializers.CharField(source="target_name")
    created_by = serializers.CharField(source="created_by.username")
    live = serializers.SerializerMethodField(help_text="Pushed and not superseded: what the branch holds")
    diff = serializers.SerializerMethodField(help_text="When drift: the semantic diff from the deployed version to the file")  # fmt: skip
    drift_commit = serializers.SerializerMethodField(
        help_text="When drift: the head commit that holds the change, its author and message"
    )

    class Meta:
        model = Deployment
        fields = [
            "id",
            "graph",
            "version",
            "target",
            "commit",
            "branch",
            "path",
            "mode",
            "status",
            "gate",
            "created_by",
            "created_at",
            "finished_at",
            "message",
            "error",
            "error_kind",
            "live",
            "drift",
            "diff",
            "drift_commit",
            "checked_at",
            "drift_imported",
        ]

    def get_live(self, obj: Deployment) -> bool:
        return obj.status == Deployment.Status.PUSHED

    def get_diff(self, obj: Deployment) -> dict[str, Any] | None:
        return obj.drift_diff if obj.drift else None

    def get_drift_commit(self, obj: Deployment) -> dict[str, str] | None:
        if not obj.drift:
            return None
        return {"commit": obj.head_commit, "author": obj.drift_author, "message": obj.drift_message}


class DeployTargetListCreateApi(APIView):
    @extend_schema(operation_id="deploy_targets_list", responses=paginated(DeployTargetOutputSerializer))
    def get(self, request: Request) -> Response:
        """The deploy targets you may use: yours and the shared ones (staff: all)."""
        return paginate(request, self, selectors.target_list(user=request.user), DeployTargetOutputSerializer)

    @extend_schema(
        operation_id="deploy_targets_create",
        request=DeployTargetInput,
        responses={201: DeployTargetOutputSerializer},
    )
    def post(self, request: Request) -> Response:
        """Create a deploy target: a Git repository, a branch, a path template, a mode (`commit` to
        the branch, or `review`: a branch `studio/{name}-v{n}` for a pull request), the commit
        author and write-only credentials. Private to you unless staff shares it; audited."""
        data = DeployTargetInput(data=request.data)
        data.is_valid(raise_exception=True)
        target = targets.target_create(owner=request.user, **data.validated_data)
        return Response(DeployTargetOutputSerializer(target).data, status=status.HTTP_201_CREATED)


class DeployTargetDetailApi(APIView):
    @extend_schema(operation_id="deploy_targets_retrieve", responses=DeployTargetOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """One deploy target you may use (never its credentials)."""
        return Response(DeployTargetOutputSerializer(selectors.target_get(pk=pk, user=request.user)).data)

    @extend_schema(
        operation_id="deploy_targets_update",
        request=DeployTargetInput(partial=True),
        responses=DeployTargetOutputSerializer,
    )
    def patch(self, request: Request, pk: int) -> Response:
        """Change a deploy target: its owner while private, or staff. Audited (credentials only as
        changed)."""
        data = DeployTargetInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        target = selectors.target_get(pk=pk, user=request.user)
        target = targets.target_update(target=target, actor=request.user, **data.validated_data)
        return Response(DeployTargetOutputSerializer(target).data)

    @extend_schema(operation_id="deploy_targets_destroy", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        """Delete a deploy target (its deployments stay, with its name)."""
        target = selectors.target_get(pk=pk, user=request.user)
        targets.target_delete(target=target, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeployInput(serializers.Serializer):
    target = serializers.CharField(max_length=63, help_text="The deploy target's name or id")
    message = serializers.CharField(required=False, default="", allow_blank=True, max_length=5000)
    force = serializers.BooleanField(
        required=False, default=False, help_text="Deploy although the test gate is closed (owner, editors)"
    )
    reason = serializers.CharField(
        required=False, default="", allow_blank=True, trim_whitespace=False, max_length=5000,
        help_text="Why the gate is forced (at least 8 visible characters); the audit log keeps it",
    )  # fmt: skip


class GraphVersionDeployApi(APIView):
    @extend_schema(
        operation_id="graphs_versions_deploy",
        request=DeployInput,
        responses={201: DeploymentOutputSerializer, 202: DeploymentOutputSerializer},
    )
    def post(self, request: Request, name: str, number: VersionRef) -> Response:
        """Commit the version's exported YAML (exactly as Export gives it) to the target's
        repository, through a worker: 201 with the deployment once pushed (`pushed`, or `review`
        for a review branch), 202 while still `pending` after DEPLOY_WAIT_SECONDS. The owner and
        editors only; the export gate applies (409 `tests_required` unless `force` with a
        `reason`). When the file on the branch changed since the last deployment: 409 with the
        `diff`, nothing pushed. Git failures answer 502 with `code` (`auth`, `not-found`,
        `rejected`, `network`, `moved`); a host the URL guard refuses answers 400 (`forbidden`);
        credentials the configured keys cannot decrypt answer 409 (`credentials`).
        """
        data = DeployInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = graph_selectors.graph_get(name=name, user=request.user, latest_manifest=False)
        version = graph_selectors.version_get(graph=graph, number=number)
        target = selectors.target_find(ref=data.validated_data["target"], user=request.user)
        deployment = services.deploy_start(
            graph=graph,
            version=version,
            target=target,
            actor=request.user,
            message=data.validated_data["message"],
            force=data.validated_data["force"],
            reason=data.validated_data["reason"],
        )
        deployment = services.deployment_wait(deployment, settings.DEPLOY_WAIT_SECONDS)
        body = DeploymentOutputSerializer(deployment).data
        services.raise_for_failure(deployment, body)
        pending = deployment.status == Deployment.Status.PENDING
        return Response(body, status=status.HTTP_202_ACCEPTED if pending else status.HTTP_201_CREATED)


class GraphDeploymentListApi(APIView):
    @extend_schema(
        operation_id="graphs_deployments_list",
        parameters=[
            OpenApiParameter(
                "refresh",
                bool,
                description="1: read the file at each live target's branch head now (drift), "
                "within DEPLOY_GIT_TIMEOUT per target",
            )
        ],
        responses=paginated(DeploymentOutputSerializer),
    )
    def get(self, request: Request, name: str) -> Response:
        """The graph's deployments, newest first: where each version went, which are live, and
        for live ones whether the file at the branch head differs from the deployed version
        (`drift`, with the semantic `diff`). `?refresh=1` reads the branches first."""
        graph = graph_selectors.graph_get(name=name, user=request.user, latest_manifest=False)
        if request.query_params.get("refresh") in ("1", "true", "yes"):
            services.drift_refresh(graph=graph)
        return paginate(request, self, selectors.deployment_list(graph=graph), DeploymentOutputSerializer)


class GraphDeploymentImportDriftApi(APIView):
    @extend_schema(operation_id="graphs_deployments_import_drift", request=None, responses={201: VersionOutputSerializer})  # fmt: skip
    def post(self, request: Request, name: str, pk: int) -> Response:
        """Save the file changed in Git as a new version of the graph (its commit's message and
        author in the version's message) and record it as live at that commit. The owner and
        editors only."""
        graph = graph_selectors.graph_get(name=name, user=request.user, latest_manifest=False)
        deployment = selectors.deployment_get(graph=graph, pk=pk)
        version = services.import_drift(deployment=deployment, actor=request.user)
        version = graph_selectors.version_get(graph=graph, number=version.number)
        return Response(VersionOutputSerializer(version).data, status=status.HTTP_201_CREATED)


class LiveDeploymentListApi(APIView):
    @extend_schema(operation_id="deployments_live", responses=paginated(DeploymentOutputSerializer))
    def get(self, request: Request) -> Response:
        """What is live where: every graph's pushed deployments (one per target), by graph name."""
        return paginate(request, self, selectors.live_list(user=request.user), DeploymentOutputSerializer)
