"""The engine: runs an InferenceGraph on one request with KServe router semantics.

Pure Python (stdlib, httpx, ``graphs.language.model``); no Django, DRF or Celery. It gets
everything from outside (config, HTTP client, clock, random source, event callback), returns a
:class:`GraphResult` and persists nothing.
"""

from execution.engine.conditions import ConditionResult, evaluate_condition
from execution.engine.config import DEFAULT_DEADLINE_S, DEFAULT_URL_TEMPLATE, EngineConfig
from execution.engine.goports.gojson import GoJsonError, go_json_dumps, is_valid_json
from execution.engine.goports.sniff import response_content_type
from execution.engine.headers import canonical_header_key, compile_patterns
from execution.engine.runner import (
    NO_MATCH,
    GraphResult,
    error_body,
    map_predictions_to_instances,
    run_graph,
    run_graph_sync,
)
from execution.engine.trace import EVENT_TYPES, EventCallback, TraceEvent, body_view
from execution.engine.transport.http import DEFAULT_MAX_RESPONSE_BYTES, ResponseTooLarge, make_client
from execution.engine.transport.urlguard import BlockedUrl, UrlGuard

__all__ = [
    "DEFAULT_DEADLINE_S",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_URL_TEMPLATE",
    "EVENT_TYPES",
    "NO_MATCH",
    "BlockedUrl",
    "ConditionResult",
    "EngineConfig",
    "EventCallback",
    "GoJsonError",
    "GraphResult",
    "ResponseTooLarge",
    "TraceEvent",
    "UrlGuard",
    "body_view",
    "canonical_header_key",
    "compile_patterns",
    "error_body",
    "evaluate_condition",
    "go_json_dumps",
    "is_valid_json",
    "make_client",
    "map_predictions_to_instances",
    "response_content_type",
    "run_graph",
    "run_graph_sync",
]
