"""Who may do what with a graph: its members and their roles, and its audit log."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.exceptions import BadRequest, NotFound
from config.pagination import paginate, paginated
from config.types import AuthedRequest as Request
from graphs import selectors, services
from graphs.models import GraphMember
from graphs.serializers import AuditEventOutputSerializer, MemberOutputSerializer


class GraphMemberListCreateApi(APIView):
    class MemberAddInput(serializers.Serializer):
        user = serializers.CharField(max_length=150)
        role = serializers.ChoiceField(
            choices=GraphMember.Role.choices,
            default=GraphMember.Role.EDITOR,
            help_text="viewer: reads and runs; editor (default): also saves and rolls back",
        )

    @extend_schema(operation_id="graphs_members_list", responses=MemberOutputSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        """The graph's members and their roles (`viewer` reads and runs, `editor` also saves and
        rolls back).
        """
        graph = selectors.graph_get(name=name, user=request.user)
        return Response(MemberOutputSerializer(selectors.member_list(graph=graph), many=True).data)

    @extend_schema(
        operation_id="graphs_members_create", request=MemberAddInput, responses={201: MemberOutputSerializer}
    )
    def post(self, request: Request, name: str) -> Response:
        """Add a member, or change a member's role. Owner only; an unknown role is 400."""
        data = self.MemberAddInput(data=request.data)
        data.is_valid(raise_exception=True)
        graph = selectors.graph_get(name=name, user=request.user)
        user = selectors.user_by_name(data.validated_data["user"])
        if user is None:
            raise BadRequest(f"There is no user named {data.validated_data['user']!r}.")
        member = services.graph_member_add(
            graph=graph, user=user, actor=request.user, role=data.validated_data["role"]
        )
        return Response(MemberOutputSerializer(member).data, status=status.HTTP_201_CREATED)


class GraphMemberDeleteApi(APIView):
    @extend_schema(operation_id="graphs_members_destroy", responses={204: None})
    def delete(self, request: Request, name: str, username: str) -> Response:
        """Remove a member from the graph (they keep read access, as every signed-in user). Owner only."""
        graph = selectors.graph_get(name=name, user=request.user)
        user = selectors.user_by_name(username)
        if user is None:
            raise NotFound(f"There is no user named {username!r}.")
        services.graph_member_remove(graph=graph, user=user, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GraphAuditListApi(APIView):
    @extend_schema(operation_id="graphs_audit_list", responses=paginated(AuditEventOutputSerializer))
    def get(self, request: Request, name: str) -> Response:
        """The graph's audit log, newest first: who created, saved, rolled back, archived and shared
        it.
        """
        graph = selectors.graph_get(name=name, user=request.user)
        return paginate(request, self, selectors.audit_list(graph=graph), AuditEventOutputSerializer)
