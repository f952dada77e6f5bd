"""What the OpenAPI schema says beyond what the views declare: the one error shape and where it
answers, the InferenceGraph schema behind every ``manifest``, the shape of the JSON columns the
answers carry, and that an answer's fields are always there (the frontend's types are generated
from this schema: frontend/src/generated/api.ts).

drf-spectacular calls :func:`postprocess` once per schema build (``SPECTACULAR_SETTINGS``
``POSTPROCESSING_HOOKS``). Every operation gets the error answers that apply to it, each with the
body ``config.exceptions`` writes; the answers an operation declares itself are kept.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from graphs.language.schema import OPENAPI_SCHEMA

ERROR_SCHEMA: Final = {
    "type": "object",
    "description": "Every error answer has this shape; `issues` carries only the fields that apply.",
    "properties": {
        "detail": {"type": "string", "description": "What went wrong, in a sentence."},
        "issues": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "example": "switch.no-condition"},
                    "severity": {"type": "string", "enum": ["error", "warning"]},
                    "message": {"type": "string"},
                    "node": {"type": "string"},
                    "step": {"type": "integer"},
                    "path": {"type": "string", "example": "spec.nodes.root.steps[0].weight"},
                    "line": {"type": "integer"},
                    "column": {"type": "integer"},
                },
                "required": ["code", "message"],
            },
        },
    },
    "required": ["detail"],
}

CONFLICT_SCHEMA: Final = {
    "description": "A stale save or rollback: the error, the latest version and what changed since your base.",
    "allOf": [
        {"$ref": "#/components/schemas/Error"},
        {
            "type": "object",
            "properties": {
                "latest_version": {"type": "integer"},
                "base_version": {"type": "integer"},
                "diff": {
                    "type": "object",
                    "additionalProperties": {},
                    "nullable": True,
                    "description": "The semantic diff from your base to the latest",
                },
                "latest": {
                    "allOf": [{"$ref": "#/components/schemas/VersionOutput"}],
                    "nullable": True,
                    "description": "The latest version, as the version endpoint shows it",
                },
            },
            "required": ["latest_version", "base_version", "diff", "latest"],
        },
    ],
}

# The answers every operation may give, and those some give (by operationId).
_ALWAYS: Final = {
    "401": "Not signed in, or the token was revoked or expired: send `Authorization: Token <key>` "
    "(a personal API token, from /tokens/) or a session cookie.",
    "403": "Signed in, but not allowed (a session request without its CSRF token is refused too).",
}
_WITH_PATH_PARAMETER: Final = {
    "404": "No such graph, version, run, environment or member (or not yours to see)."
}
_BAD_REQUEST: Final = "The request is malformed: the issues say which field or parameter and why."
_BUSY: Final = "The database is busy; try again after `Retry-After` seconds."
_BY_OPERATION: Final[dict[str, dict[str, str]]] = {
    "graphs_create": {"413": "The manifest is larger than the studio's limits (size, nodes, steps, depth)."},
    "graphs_versions_create": {
        "409": "Stale base version: `detail` names the latest version and the diff from your base; "
        "nothing was saved, nothing you sent is lost.",
        "413": "The manifest is larger than the studio's limits (size, nodes, steps, depth).",
    },
    "graphs_versions_rollback": {"409": "Stale base version (as for a save)."},
    "graphs_versions_export": {
        "422": "The version has errors KServe would reject; `issues` lists them.",
        "409": "The graph requires passing tests and this version has no passing suite run the gate "
        "trusts on the current cases (`code: tests_required`, `last_passing_version`); a POST with "
        "`force` and `reason` overrides.",
    },
    "graphs_versions_export_create": {
        "422": "The version has errors KServe would reject; `issues` lists them.",
        "409": "The graph requires passing tests and this version has no passing suite run the gate "
        "trusts on the current cases (`code: tests_required`, `last_passing_version`); send `force` "
        "and `reason` to override.",
    },
    "graphs_versions_deploy": {
        "422": "The version has errors KServe would reject; `issues` lists them.",
        "409": "The gate is closed (`code: tests_required`; send `force` and `reason` to override), or "
        "the file on the branch changed since the last deployment (`code: drift`, with `diff`; "
        "nothing was pushed), or the target's stored credentials cannot be decrypted with the "
        "configured keys (`code: credentials`: enter them again, or list the old key in "
        "STUDIO_ENCRYPTION_KEYS).",
        "502": "Git refused or could not be reached: `code` is auth, not-found, rejected, network, "
        "moved, too-large or protocol; `deployment` is the failed deployment.",
    },
    "graphs_deployments_import_drift": {
        "400": "The deployment has no change from Git to import (refresh first).",
    },
    "graphs_suite_runs_create": {
        "409": "The graph has no test cases to run.",
        "422": "The version has errors KServe would reject; `issues` lists them.",
    },
    "graphs_suite_runs_compare": {
        "409": "The graph has no test cases to run.",
        "422": "A version has errors KServe would reject; `issues` lists them.",
    },
    "suite_runs_events": {
        "429": "Too many open event streams; close one, or retry after `Retry-After` seconds."
    },
    "graphs_load_tests_create": {
        "422": "The version has errors KServe would reject; `issues` lists them.",
        "429": "You have LOAD_TEST_MAX_IN_FLIGHT_PER_USER load tests in flight; retry after `Retry-After` seconds.",
    },
    "load_tests_events": {
        "429": "Too many open event streams; close one, or retry after `Retry-After` seconds."
    },
    "graphs_import": {"413": "More documents, or a larger body, than one import takes."},
    "graphs_runs_create": {
        "422": "The version has errors KServe would reject; `issues` lists them.",
        "413": "The request body is larger than a run takes.",
    },
    "graphs_tests_create": {"409": "The graph already has a case with this name."},
    "graphs_tests_update": {
        "409": "The case changed since the If-Match revision (`code: test_case.stale`, with `revision`, "
        "`base_revision` and `current`: the case as it is now; nothing was saved), another case has "
        "this name, or the case was deleted meanwhile.",
    },
    "graphs_tests_import": {"413": "The test file is larger than the studio takes."},
    "runs_save_as_test": {
        "409": "The run has no response yet (only a finished run can become a case), or the name is taken."
    },
    "runs_events": {"429": "Too many open event streams; close one, or retry after `Retry-After` seconds."},
}


_CHAIN: Final = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "InferenceGraph",
    "metadata": {"name": "model-chainer", "namespace": "default"},
    "spec": {
        "nodes": {
            "root": {
                "routerType": "Sequence",
                "steps": [
                    {"name": "detect", "serviceName": "face-detector"},
                    {"name": "embed", "serviceName": "face-embedder", "data": "$response"},
                ],
            }
        }
    },
}
_CHAIN_YAML: Final = """apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: model-chainer
spec:
  nodes:
    root:
      routerType: Sequence
      steps:
        - name: detect
          serviceName: face-detector
        - name: embed
          serviceName: face-embedder
          data: $response
"""
# One example request per operation that takes a body, by operationId and content type.
_EXAMPLES: Final[dict[str, dict[str, Any]]] = {
    "graphs_create": {"application/json": {"manifest": _CHAIN, "message": "First draft"}},
    "graphs_versions_create": {
        "application/json": {
            "manifest": _CHAIN,
            "layout": {},
            "message": "Embed after detect",
            "base_version": 3,
        },
        "application/yaml": _CHAIN_YAML,
    },
    "graphs_versions_rollback": {"application/json": {"base_version": 5}},
    "graphs_import": {"application/yaml": _CHAIN_YAML, "application/json": _CHAIN},
    "validate": {"application/json": {"manifest": _CHAIN}},
    "conditions_evaluate": {
        "application/json": {
            "document": {"predictions": [{"label": "cat", "score": 0.93}]},
            "condition": 'predictions.#(label=="cat")',
        }
    },
    "environments_create": {
        "application/json": {
            "name": "staging",
            "service_urls": {"face-detector": "http://detector.staging.internal/v1/models/face:predict"},
            "url_template": "http://{name}.staging.internal/v1/models/{name}:predict",
            "propagate_headers": ["^X-Request-Id$", "^Authorization$"],
            "step_timeout": 10,
            "deadline": 30,
            "allow_private": True,
        }
    },
    "environments_update": {"application/json": {"deadline": 45}},
    "deploy_targets_create": {
        "application/json": {
            "name": "prod",
            "url": "https://git.example.org/platform/cluster-config.git",
            "branch": "main",
            "path": "graphs/{namespace}/{name}.yaml",
            "mode": "commit",
            "author_name": "Inference Graph Studio",
            "author_email": "studio@example.org",
            "credentials": {"username": "studio-bot", "password": "<token>"},
        }
    },
    "deploy_targets_update": {"application/json": {"mode": "review"}},
    "graphs_versions_deploy": {
        "application/json": {"target": "prod", "message": "Roll out the tuned detector"}
    },
    "graphs_members_create": {"application/json": {"user": "erin", "role": "viewer"}},
    "graphs_runs_create": {
        "application/json": {
            "version": 3,
            "payload": {"instances": [{"image": "group-photo.jpg"}]},
            "headers": {"X-Request-Id": "demo-1"},
            "environment": "local",
            "seed": 42,
        }
    },
}


_TESTS_REQUIRED: Final[dict[str, Any]] = {
    "detail": "Version 4 of 'face-recognition' has no passing suite run the export gate trusts on the "
    "current test cases, and the graph requires one before export. Have its owner or an editor run its "
    "suite in a trusted environment, or force the export (POST with force and a reason; audited).",
    "code": "tests_required",
    "last_passing_version": 3,
}


# Examples of error answers whose body carries more than the error shape, by operationId and status.
_ERROR_EXAMPLES: Final[dict[tuple[str, str], dict[str, Any]]] = {
    ("graphs_versions_export", "409"): _TESTS_REQUIRED,
    ("graphs_versions_export_create", "409"): _TESTS_REQUIRED,
    ("graphs_suite_runs_create", "409"): {
        "detail": "Graph 'pets' has no test cases yet: add one (or save a run as a test) first.",
        "code": "no_cases",
    },
}


# The operations whose 409 is a stale base version (the Conflict body, with the diff).
_STALE_BASE: Final = frozenset({"graphs_versions_create", "graphs_versions_rollback"})


_STRINGS: Final = {"type": "array", "items": {"type": "string"}}
_BODY_VIEW: Final = {
    "type": "object",
    "description": "A stored body (execution/engine/trace.py body_view): text, or base64 when it is "
    "not UTF-8, cut at the studio's limit; `size` is the whole body's.",
    "properties": {
        "body": {"type": "string"},
        "encoding": {"type": "string", "enum": ["utf-8", "base64"]},
        "size": {"type": "integer"},
        "truncated": {"type": "boolean"},
    },
    "required": ["body", "encoding", "size", "truncated"],
}
_RUN_ENVIRONMENT: Final = {
    "type": "object",
    "description": "The environment the run used: its id (null once deleted) and its name.",
    "properties": {"id": {"type": "integer", "nullable": True}, "name": {"type": "string"}},
    "required": ["id", "name"],
}
_RUN_REQUEST: Final = {
    "type": "object",
    "description": "The request sent to the graph; list rows carry only `content_type`.",
    "properties": {
        "body": {"description": "JSON when the body parsed as JSON, else its text"},
        "content_type": {"type": "string", "nullable": True},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "note": {"type": "string"},
    },
    "required": ["content_type"],
}
_RUN_RESPONSE: Final = {
    "type": "object",
    "description": "The graph's answer; list rows carry only `status_code` and `content_type`.",
    "properties": {
        "status_code": {"type": "integer", "nullable": True},
        "content_type": {"type": "string", "nullable": True},
        "body": {"description": "JSON when the body parsed as JSON, else its text (base64 per `encoding`)"},
        "encoding": {"type": "string", "nullable": True},
        "size": {"type": "integer", "nullable": True},
        "truncated": {"type": "boolean"},
        "note": {"type": "string"},
    },
    "required": ["status_code", "content_type"],
}
_FREE_OBJECT: Final = {"type": "object", "additionalProperties": {}}

# The JSON columns (and method fields) whose shape the serializers cannot say, by component.
_PROPERTIES: Final[dict[str, dict[str, dict[str, Any]]]] = {
    "EnvironmentOutput": {
        "service_urls": {"type": "object", "additionalProperties": {"type": "string"}},
        "propagate_headers": _STRINGS,
        "allow_hosts": _STRINGS,
        "allow_networks": _STRINGS,
        "secret_headers": _STRINGS,
    },
    "RunOutput": {"environment": _RUN_ENVIRONMENT, "request": _RUN_REQUEST, "response": _RUN_RESPONSE},
    "RunSummary": {"environment": _RUN_ENVIRONMENT, "request": _RUN_REQUEST, "response": _RUN_RESPONSE},
    "RunStepOutput": {
        "request_headers": {
            "type": "array",
            "description": "[name, value] pairs as sent, secret values redacted",
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
        },
        "request": {"allOf": [{"$ref": "#/components/schemas/BodyView"}], "nullable": True},
        "response": {"allOf": [{"$ref": "#/components/schemas/BodyView"}], "nullable": True},
        "condition": {
            "description": "The Sequence condition that let it run or not",
            "nullable": True,
            "oneOf": [_FREE_OBJECT, {"type": "string"}],
        },
        "route": {
            "description": "The Switch/Splitter decision that chose it",
            **_FREE_OBJECT,
            "nullable": True,
        },
    },
}

# Answers built by model serializers: every field is always in the answer (the frontend may rely on it).
_COMPLETE: Final = frozenset(
    {
        "AuditEventOutput",
        "EnvironmentOutput",
        "GraphListItem",
        "GraphOutput",
        "MemberOutput",
        "RunOutput",
        "RunStepOutput",
        "RunSummary",
        "TestCaseOutput",
        "VersionBrief",
        "VersionOutput",
        "VersionSummary",
    }
)


def _describe_outputs(schemas: dict[str, Any]) -> None:
    schemas["BodyView"] = _BODY_VIEW
    for name, properties in _PROPERTIES.items():
        component = schemas.get(name)
        if component is None:
            continue
        for prop, schema in properties.items():
            if prop in component.get("properties", {}):
                described = component["properties"][prop].get("description")
                component["properties"][prop] = {
                    **({"description": described} if described else {}),
                    **schema,
                }
    for name in _COMPLETE:
        component = schemas.get(name)
        if component is not None:
            component["required"] = list(component.get("properties", {}))


def _error_response(code: str, description: str, operation_id: str) -> dict[str, Any]:
    component = "Conflict" if code == "409" and operation_id in _STALE_BASE else "Error"
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{component}"}}},
    }


def _inference_graph_schema() -> dict[str, Any]:
    schema = copy.deepcopy(dict(OPENAPI_SCHEMA))
    schema["description"] = (
        "A KServe InferenceGraph (serving.kserve.io/v1alpha1): the CRD's own schema. Documents that "
        "break it are still stored (marked invalid, with issues), so work in progress is never lost."
    )
    return schema


def _is_free_form(schema: Any) -> bool:
    """Any JSON (``{}``, a JSONField) or an object with no declared properties."""
    if not isinstance(schema, dict) or "properties" in schema or "$ref" in schema or "allOf" in schema:
        return False
    return schema.get("type") in (None, "object")


def _link_manifests(node: Any) -> None:
    """Point every free-form ``manifest`` property at the InferenceGraph component."""
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            properties = current.get("properties")
            if isinstance(properties, dict) and _is_free_form(properties.get("manifest")):
                # Documents that break the CRD are stored too (marked invalid), hence the second form.
                properties["manifest"] = {
                    "description": "An InferenceGraph manifest (apiVersion, kind, metadata, spec).",
                    "anyOf": [{"$ref": "#/components/schemas/InferenceGraph"}, {"type": "object"}],
                }
            pending.extend(current.values())
        elif isinstance(current, list):
            pending.extend(current)


# The groups Swagger and ReDoc list operations under, in this order, each with what it holds.
TAGS: Final = {
    "Graphs": "Create, list, change, archive and import graphs (KServe InferenceGraphs).",
    "Versions": "A graph's immutable versions: save (JSON or a YAML file), read, diff, roll back "
    "and export. `latest` goes wherever a version number does.",
    "Validation": "Check a manifest or a GJSON condition without saving anything.",
    "Sharing and audit": "Who may read, run and change a graph, and what was done to it.",
    "Runs": "Test runs of a version against real step endpoints, their trace and live events.",
    "Test cases": "A graph's test cases (they outlive versions) and their YAML file.",
    "Suite runs": "A version tested against all its cases, its live progress, and comparisons.",
    "Load tests": "A version under load (N requests, C at a time): live progress, percentiles per "
    "step, comparisons, and latency budgets against the graph's timeouts.",
    "Environments": "Where test runs send their step calls, and the services the graphs call.",
    "Deploys": "Deploy targets (Git repositories), deploying a version through Git, what is live "
    "and what changed in Git since (drift).",
    "API tokens": "Personal keys for `Authorization: Token <key>`; each is shown once.",
}

# Each operation's group and one-line summary (Swagger shows it beside the path), by operationId.
OPERATIONS: Final[dict[str, tuple[str, str]]] = {
    "graphs_list": ("Graphs", "List graphs"),
    "graphs_create": ("Graphs", "Create a graph"),
    "graphs_retrieve": ("Graphs", "Get a graph with its latest version"),
    "graphs_update": ("Graphs", "Change a graph's settings"),
    "graphs_archive": ("Graphs", "Archive a graph"),
    "graphs_restore": ("Graphs", "Restore an archived graph"),
    "graphs_import": ("Graphs", "Import manifests (YAML or JSON)"),
    "graphs_versions_list": ("Versions", "List a graph's versions"),
    "graphs_versions_create": ("Versions", "Save a new version (JSON or a YAML file)"),
    "graphs_versions_retrieve": ("Versions", "Get a version"),
    "graphs_versions_export": ("Versions", "Export a version as a manifest"),
    "graphs_versions_export_create": ("Versions", "Export a version, recording the gate's decision"),
    "graphs_versions_rollback": ("Versions", "Roll back to a version"),
    "graphs_diff": ("Versions", "Diff two versions"),
    "graphs_versions_upgrade_report": ("Versions", "What a KServe upgrade changes for a version"),
    "validate": ("Validation", "Validate a manifest"),
    "conditions_evaluate": ("Validation", "Evaluate a GJSON condition"),
    "graphs_members_list": ("Sharing and audit", "List a graph's members"),
    "graphs_members_create": ("Sharing and audit", "Add a member or change their role"),
    "graphs_members_destroy": ("Sharing and audit", "Remove a member"),
    "graphs_audit_list": ("Sharing and audit", "A graph's audit log"),
    "graphs_runs_list": ("Runs", "List a graph's runs"),
    "graphs_runs_create": ("Runs", "Start a test run"),
    "runs_retrieve": ("Runs", "Get a run with its response and trace"),
    "runs_steps_list": ("Runs", "List a run's steps"),
    "runs_trace": ("Runs", "Get a run's trace as OTLP JSON"),
    "runs_events": ("Runs", "Follow a run's events (SSE)"),
    "runs_cancel": ("Runs", "Cancel a run"),
    "runs_rerun": ("Runs", "Run the same request again"),
    "graphs_tests_list": ("Test cases", "List a graph's test cases"),
    "graphs_tests_create": ("Test cases", "Add a test case"),
    "graphs_tests_retrieve": ("Test cases", "Get a test case"),
    "graphs_tests_update": ("Test cases", "Replace a test case"),
    "graphs_tests_destroy": ("Test cases", "Delete a test case"),
    "graphs_tests_export": ("Test cases", "Export the test cases as YAML"),
    "graphs_tests_import": ("Test cases", "Import a test cases YAML file"),
    "runs_save_as_test": ("Test cases", "Save a run as a test case"),
    "graphs_suite_runs_list": ("Suite runs", "List a graph's suite runs"),
    "graphs_suite_runs_create": ("Suite runs", "Run the test suite on a version"),
    "graphs_suite_runs_compare": ("Suite runs", "Run the suite on two versions to compare them"),
    "suite_runs_retrieve": ("Suite runs", "Get a suite run with its results"),
    "suite_runs_cancel": ("Suite runs", "Cancel a suite run"),
    "suite_runs_events": ("Suite runs", "Follow a suite run's events (SSE)"),
    "suite_runs_compare": ("Suite runs", "Compare two suite runs"),
    "graphs_load_tests_list": ("Load tests", "List a graph's load tests"),
    "graphs_load_tests_create": ("Load tests", "Start a load test of a version"),
    "graphs_versions_budget_check": ("Load tests", "Check latency budgets against the version's timeouts"),
    "load_tests_retrieve": ("Load tests", "Get a load test with its percentiles"),
    "load_tests_cancel": ("Load tests", "Cancel a load test"),
    "load_tests_events": ("Load tests", "Follow a load test's progress (SSE)"),
    "load_tests_compare": ("Load tests", "Compare two load tests step by step"),
    "environments_list": ("Environments", "List the environments you may use"),
    "environments_create": ("Environments", "Create an environment"),
    "environments_retrieve": ("Environments", "Get an environment"),
    "environments_update": ("Environments", "Change an environment"),
    "environments_destroy": ("Environments", "Delete an environment"),
    "environments_probe": ("Environments", "Test connection: probe each mapped service"),
    "services_list": ("Environments", "List the services the graphs call"),
    "deploy_targets_list": ("Deploys", "List the deploy targets you may use"),
    "deploy_targets_create": ("Deploys", "Create a deploy target"),
    "deploy_targets_retrieve": ("Deploys", "Get a deploy target"),
    "deploy_targets_update": ("Deploys", "Change a deploy target"),
    "deploy_targets_destroy": ("Deploys", "Delete a deploy target"),
    "graphs_versions_deploy": ("Deploys", "Deploy a version through Git"),
    "graphs_deployments_list": ("Deploys", "List a graph's deployments, with drift"),
    "graphs_deployments_import_drift": ("Deploys", "Import a change made in Git as a new version"),
    "deployments_live": ("Deploys", "What is live where"),
    "tokens_list": ("API tokens", "List your API tokens"),
    "tokens_create": ("API tokens", "Create an API token (its key is shown once)"),
    "tokens_destroy": ("API tokens", "Revoke an API token"),
}


def _label(operation: dict[str, Any]) -> None:
    """The operation's tag and summary from ``OPERATIONS`` (one the table misses keeps
    drf-spectacular's path-derived tag and no summary, which tests/api/test_openapi.py refuses)."""
    entry = OPERATIONS.get(operation.get("operationId", ""))
    if entry is not None:
        operation["tags"] = [entry[0]]
        operation.setdefault("summary", entry[1])


def postprocess(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: error answers, tags and summaries, the Error, Conflict
    and InferenceGraph components."""
    result["tags"] = [{"name": name, "description": description} for name, description in TAGS.items()]
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR_SCHEMA
    schemas["Conflict"] = CONFLICT_SCHEMA
    schemas["InferenceGraph"] = _inference_graph_schema()
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            _label(operation)
            extra = dict(_ALWAYS)
            if "{" in path:
                extra.update(_WITH_PATH_PARAMETER)
            writes = method in ("post", "put", "patch", "delete")
            if writes or any(p.get("in") == "query" for p in operation.get("parameters", [])):
                extra["400"] = _BAD_REQUEST
            if writes:
                extra["503"] = _BUSY
            extra.update(_BY_OPERATION.get(operation.get("operationId", ""), {}))
            responses = operation.setdefault("responses", {})
            for code, description in extra.items():
                responses.setdefault(
                    code, _error_response(code, description, operation.get("operationId", ""))
                )
                example = _ERROR_EXAMPLES.get((operation.get("operationId", ""), code))
                if example is not None:
                    media = responses[code]["content"]["application/json"]
                    media.setdefault("examples", {"example": {"value": example}})
            content = operation.get("requestBody", {}).get("content", {})
            for content_type, example in _EXAMPLES.get(operation.get("operationId", ""), {}).items():
                if content_type in content:
                    content[content_type].setdefault("examples", {"example": {"value": example}})
    _link_manifests(schemas)
    _describe_outputs(schemas)
    return result
