"""Personal API tokens: list, create (the one answer with the key) and revoke."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.pagination import paginate, paginated
from config.types import AuthedRequest as Request
from graphs import tokens
from graphs.serializers import ApiTokenCreatedSerializer, ApiTokenOutputSerializer


class ApiTokenListCreateApi(APIView):
    class TokenCreateInput(serializers.Serializer):
        name = serializers.CharField(
            max_length=100, help_text="What the token is for, e.g. the script or machine"
        )
        expires_at = serializers.DateTimeField(
            required=False, allow_null=True, help_text="When it stops working; none (the default) for never"
        )

    @extend_schema(operation_id="tokens_list", responses=paginated(ApiTokenOutputSerializer))
    def get(self, request: Request) -> Response:
        """Your personal API tokens, newest first, without their keys."""
        return paginate(request, self, tokens.api_token_list(user=request.user), ApiTokenOutputSerializer)

    @extend_schema(
        operation_id="tokens_create",
        request=TokenCreateInput,
        responses={201: ApiTokenCreatedSerializer},
        examples=[
            OpenApiExample(
                "A token for CI that expires",
                value={"name": "ci-pipeline", "expires_at": "2030-01-01T00:00:00Z"},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        """Create a personal API token. The answer carries its `key`, the only time it is shown:
        send it as `Authorization: Token <key>`. An expiry in the past is 400."""
        data = self.TokenCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        created = tokens.api_token_create(
            user=request.user,
            name=data.validated_data["name"],
            expires_at=data.validated_data.get("expires_at"),
        )
        body = {**ApiTokenOutputSerializer(created.token).data, "key": created.key}
        # The one answer with the key in it: no cache or proxy may keep a copy.
        return Response(body, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})


class ApiTokenDeleteApi(APIView):
    @extend_schema(operation_id="tokens_destroy", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        """Revoke one of your API tokens: the next request with its key is 401. Another user's
        token is 404."""
        tokens.api_token_revoke(user=request.user, token_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
