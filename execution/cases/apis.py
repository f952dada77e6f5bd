"""REST API of saved test cases: CRUD under the graph, import and export of test files, and
"save run as test". Thin: each method validates its input's shape, calls one selector or service,
and serializes the answer; the case itself is checked by the service (issues pinned to the case,
expectation and field)."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiRequest,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.exceptions import BadRequest, PayloadTooLarge
from config.pagination import paginate, paginated
from config.parsers import RawTextParser
from config.types import AuthedRequest as Request
from execution import selectors as run_selectors
from execution.cases import selectors, services
from execution.cases.models import GraphCase
from execution.serializers import TestCaseOutputSerializer
from graphs import selectors as graph_selectors
from graphs.language import issue_dict

_IF_MATCH = re.compile(r'^\s*(?:W/)?"?r([0-9]{1,9})"?\s*$')


def case_etag(case: GraphCase) -> str:
    """A case's ETag: its revision, which every change raises (``"r{n}"``)."""
    return f'"r{case.revision}"'


def base_revision_from(request: Request) -> int | None:
    """The revision an edit started from (``If-Match: "r{n}"``); None without one (or ``*``)."""
    header = request.headers.get("If-Match")
    if header is None or header.strip() == "*":
        return None
    match = _IF_MATCH.match(header)
    if match is None:
        raise BadRequest(f'If-Match must look like "r3" (the ETag of the test case), got {header[:80]!r}.')
    return int(match.group(1))


def _with_etag(response: Response, case: GraphCase) -> Response:
    response["ETag"] = case_etag(case)
    return response


_IF_MATCH_PARAMETER = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description='The ETag ("r{n}") of the revision the edit started from; 409 if the case changed since',
)

CASE_EXAMPLE = {
    "name": "a cat goes to the cat model",
    "description": "The Switch picks the cat step for a cat photo.",
    "request": {"payload": {"instances": [{"animal": "cat"}]}, "headers": {"X-Request-Id": "t-1"}},
    "seed": 7,
    "expectations": [
        {"status": 200},
        {"body": {"predictions": ["cat"]}, "match": "subset", "ignore": ["id"]},
        {"path": "predictions.0", "step": "root/classify", "equals": "cat"},
        {"path": "scores.0", "approx": 0.9, "tolerance": 0.05},
        {"route": "root", "took": "cat"},
        {"step": "root/dog", "status": "not-reached"},
        {"latency": 500},
    ],
}
INVALID_EXAMPLE = {
    "detail": "The test case has 1 problem(s).",
    "issues": [
        {
            "severity": "error",
            "code": "expectation.regex",
            "message": "not a valid regex: missing ): (unclosed",
            "case_name": "a cat goes to the cat model",
            "expectation": 2,
            "field": "matches",
            "path": "expectations[2].matches",
        }
    ],
}
TESTS_YAML_EXAMPLE = """\
apiVersion: tests.inferencegraph.studio/v1alpha1
kind: InferenceGraphTest
graph: pets
cases:
- name: a cat goes to the cat model
  request:
    payload: {instances: [{animal: cat}]}
  expectations:
  - status: 200
  - {route: root, took: cat}
"""


_CASE_INPUT = inline_serializer(
    "TestCaseInput",
    {
        "name": serializers.CharField(max_length=200),
        "description": serializers.CharField(required=False, allow_blank=True),
        "request": serializers.JSONField(
            required=False,
            help_text="{payload: any JSON | raw: text, content_type, headers}; secret headers are stored redacted",
        ),
        "seed": serializers.IntegerField(required=False, help_text="Fixes the Splitter draws"),
        "environment": serializers.CharField(required=False),
        "expectations": serializers.ListField(
            child=serializers.JSONField(),
            help_text="Each one of: status, body (match exact|subset, ignore), path (with step and one "
            "of equals, not_equals, exists, missing, matches, gt, lt, approx (+tolerance), contains), "
            "route (took), step (status: N | skipped | not-reached | error), latency (ms)",
        ),
    },
)
_CASE_EXAMPLES = [
    OpenApiExample("A case", value=CASE_EXAMPLE, request_only=True),
    OpenApiExample(
        "A malformed expectation", value=INVALID_EXAMPLE, response_only=True, status_codes=["400"]
    ),
]


def _document(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise BadRequest("A test case is a JSON object (name, request, expectations, …).")
    return dict(request.data)


class CaseListCreateApi(APIView):
    @extend_schema(operation_id="graphs_tests_list", responses=paginated(TestCaseOutputSerializer))
    def get(self, request: Request, name: str) -> Response:
        """The graph's test cases (they outlive versions), by name: request, seed, environment and
        expectations."""
        graph = graph_selectors.graph_get(name=name, user=request.user)
        return paginate(
            request, self, selectors.test_case_list(graph=graph, user=request.user), TestCaseOutputSerializer
        )

    @extend_schema(
        operation_id="graphs_tests_create",
        request=_CASE_INPUT,
        responses={201: TestCaseOutputSerializer},
        examples=_CASE_EXAMPLES,
    )
    def post(self, request: Request, name: str) -> Response:
        """Add a test case. A malformed expectation (bad path, unknown step, wrong operator) is 400
        with issues pinned to it. The owner and editors only."""
        graph = graph_selectors.graph_get(name=name, user=request.user)
        case = services.test_case_create(graph=graph, user=request.user, document=_document(request))
        return _with_etag(Response(TestCaseOutputSerializer(case).data, status=status.HTTP_201_CREATED), case)


class CaseDetailApi(APIView):
    @extend_schema(operation_id="graphs_tests_retrieve", responses=TestCaseOutputSerializer)
    def get(self, request: Request, name: str, pk: int) -> Response:
        """One test case with its request and expectations (secret headers redacted). The `ETag`
        header (`"r{revision}"`) is the precondition of the next edit (`If-Match`)."""
        graph = graph_selectors.graph_get(name=name, user=request.user)
        case = selectors.test_case_get(graph=graph, pk=pk, user=request.user)
        return _with_etag(Response(TestCaseOutputSerializer(case).data), case)

    @extend_schema(
        operation_id="graphs_tests_update",
        request=_CASE_INPUT,
        parameters=[_IF_MATCH_PARAMETER],
        responses={200: TestCaseOutputSerializer},
        examples=_CASE_EXAMPLES,
    )
    def put(self, request: Request, name: str, pk: int) -> Response:
        """Replace a test case (as created). The owner and editors only. With `If-Match: "r{n}"`
        (the ETag the edit started from) a case someone changed since is not overwritten: 409 with
        the current `revision` and the case as it is now (`current`); nothing is saved."""
        graph = graph_selectors.graph_get(name=name, user=request.user)
        base_revision = base_revision_from(request)
        case = selectors.test_case_get(graph=graph, pk=pk, user=request.user)
        case = services.test_case_update(
            test_case=case, user=request.user, document=_document(request), base_revision=base_revision
        )
        return _with_etag(Response(TestCaseOutputSerializer(case).data), case)

    @extend_schema(operation_id="graphs_tests_destroy", responses={204: None})
    def delete(self, request: Request, name: str, pk: int) -> Response:
        """Delete a test case. The owner and editors only."""
        graph = graph_selectors.graph_get(name=name, user=request.user)
        case = selectors.test_case_get(graph=graph, pk=pk, user=request.user)
        services.test_case_delete(test_case=case, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CaseExportApi(APIView):
    @extend_schema(
        operation_id="graphs_tests_export",
        responses={(200, "application/yaml"): OpenApiTypes.STR},
        examples=[OpenApiExample("A test file", value=TESTS_YAML_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, name: str) -> HttpResponse:
        """The graph's cases as one ``kind: InferenceGraphTest`` YAML file, to keep beside the manifest."""
        graph = graph_selectors.graph_get(name=name, user=request.user)
        response = HttpResponse(services.test_cases_export(graph=graph), content_type="application/yaml")
        response["Content-Disposition"] = f'inline; filename="{graph.name}.tests.yaml"'
        return response


class CaseImportApi(APIView):
    parser_classes = [RawTextParser]

    class FilterSerializer(serializers.Serializer):
        mode = serializers.ChoiceField(
            choices=services.IMPORT_MODES,
            default="merge",
            help_text="merge (default): add, replacing same-named cases; replace: the file's cases only",
        )

    @extend_schema(
        operation_id="graphs_tests_import",
        request={
            "application/yaml": OpenApiRequest(
                OpenApiTypes.STR, examples=[OpenApiExample("A test file", value=TESTS_YAML_EXAMPLE)]
            )
        },
        parameters=[FilterSerializer],
        responses={
            201: inline_serializer(
                "TestImportResult",
                {"count": serializers.IntegerField(), "cases": TestCaseOutputSerializer(many=True)},
            ),
        },
    )
    def post(self, request: Request, name: str) -> Response:
        """Import a `kind: InferenceGraphTest` YAML file: merge (same-named cases replaced) or
        replace, all or nothing; problems are 400 with their case, expectation, line and column."""
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        raw = request.data if isinstance(request.data, bytes) else b""
        if len(raw) > settings.STUDIO_MAX_MANIFEST_BYTES:
            limit = settings.STUDIO_MAX_MANIFEST_BYTES
            message = f"A test file is at most {limit} bytes here (STUDIO_MAX_MANIFEST_BYTES)."
            raise PayloadTooLarge(message, issues=[issue_dict("load.too-large", message)])
        graph = graph_selectors.graph_get(name=name, user=request.user)
        cases = services.test_cases_import(
            graph=graph, user=request.user, text=raw, mode=filters.validated_data["mode"]
        )
        return Response(
            {"count": len(cases), "cases": TestCaseOutputSerializer(cases, many=True).data},
            status=status.HTTP_201_CREATED,
        )


class RunSaveAsTestApi(APIView):
    class SaveAsTestInput(serializers.Serializer):
        name = serializers.CharField(required=False, max_length=200, help_text="Default: run <id prefix>")
        preview = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Answer 200 with the case document it would write; nothing is saved",
        )
        expectations = serializers.ListField(
            child=serializers.JSONField(),
            required=False,
            help_text="Record these instead of the captured ones (the ones the author kept)",
        )

    class PreviewOutput(serializers.Serializer):
        document = serializers.JSONField(help_text="The case as it would be written")

    @extend_schema(
        operation_id="runs_save_as_test",
        request=SaveAsTestInput,
        responses={201: TestCaseOutputSerializer, 200: PreviewOutput},
        examples=[
            OpenApiExample("Named", value={"name": "cat photo, v3"}, request_only=True),
            OpenApiExample("Preview", value={"name": "cat photo, v3", "preview": True}, request_only=True),
            OpenApiExample(
                "Kept expectations",
                value={
                    "name": "cat photo, v3",
                    "expectations": [{"status": 200}, {"route": "root", "took": "cat"}],
                },
                request_only=True,
            ),
        ],
    )
    def post(self, request: Request, run_id: str) -> Response:
        """A new case of the run's graph: its request, seed and environment; expecting its status,
        its body (as a subset) and the routes it took, or the ``expectations`` given. With
        ``preview`` the answer is the document it would write (200) and nothing is saved."""
        data = self.SaveAsTestInput(data=request.data)
        data.is_valid(raise_exception=True)
        run = run_selectors.run_get(run_id=run_id, user=request.user, with_steps=False)
        name = data.validated_data.get("name")
        if data.validated_data["preview"]:
            document = services.test_case_document_from_run(run=run, name=name)
            return Response({"document": document})
        case = services.test_case_from_run(
            run=run, user=request.user, name=name, expectations=data.validated_data.get("expectations")
        )
        return Response(TestCaseOutputSerializer(case).data, status=status.HTTP_201_CREATED)
