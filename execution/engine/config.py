"""Engine configuration: everything a run needs to know that is not in the graph."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from execution.engine.tracecontext import TraceContext
from execution.engine.transport.http import DEFAULT_MAX_RESPONSE_BYTES
from execution.engine.transport.urlguard import UrlGuard
from graphs.language.releases import DEFAULT_RELEASE, Release

__all__ = ["DEFAULT_DEADLINE_S", "DEFAULT_URL_TEMPLATE", "REDACTED", "EngineConfig"]

# KServe's controller resolves serviceName to the ISVC's cluster-local address + the v1 predict path.
DEFAULT_URL_TEMPLATE: Final = "http://{name}.{namespace}.svc.cluster.local/v1/models/{name}:predict"
# KServe's default routerTimeouts.serverWrite (pkg/constants/constants.go).
DEFAULT_DEADLINE_S: Final = 60.0
# 64 KiB of each body in the trace: enough to read any normal payload, bounded for the database.
DEFAULT_BODY_CAP: Final = 64 * 1024
# What stands for a secret value, in the trace and in stored runs alike (``Bearer ***`` there).
REDACTED: Final = "***"
DEFAULT_REDACTED: Final = ("Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key")


def _frozen_empty() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Where and how a run sends its requests. Immutable; share it freely.

    - ``service_urls``: serviceName -> URL; names not in it use ``url_template`` with ``{name}`` and
      ``{namespace}`` (``namespace`` defaults to the manifest's, then ``default``).
    - ``propagate_headers``: regex patterns matched against canonical client header names.
    - ``step_timeout``: seconds per step call. It can only tighten ``routerTimeouts.serviceClient``
      (the smaller wins), so a test run never passes where KServe would time out.
    - ``deadline``: seconds for the whole request; likewise it can only tighten
      ``routerTimeouts.serverWrite``. With neither, KServe's 60 s.
    - ``body_cap``: bytes of each body kept in trace events.
    - ``max_response_bytes``: a step response larger than this fails the step (None: any size,
      as KServe; ``servegraph`` and ``rungraph`` use None unless told otherwise).
    - ``max_run_bytes``: a budget for the response bodies of the whole run, all steps together
      (None: none, as in KServe). Enforced by the run's client, which must be made with it:
      ``make_client(max_run_bytes=config.max_run_bytes)``; past it the step being read fails with
      a cause naming the budget.
    - ``max_step_calls``: the most step calls (HTTP and ``nodeName`` alike) one run may make;
      the call past it is not made, the run stops (every call in flight is cancelled) and answers
      500 with ``stopped after N step calls (<name>)`` (None: no cap, as KServe).
    - ``max_event_bytes``: the most trace-event bytes (about their JSON size) one run may report;
      the event that passes it stops the run likewise, with
      ``stopped after its trace events passed N MiB (<name>)`` (None: no cap, as KServe). The
      cancelled calls' closing events (no bodies) still follow it.
    - ``limit_names``: what the messages call each limit (``{"max_step_calls": "RUN_MAX_STEP_CALLS"}``):
      the name its caller sets it by; a limit not in it is called by its field name.
    - ``guard``: the URL guard applied to every step URL before connecting (None: no guard).
    - ``redact_headers``: header names whose values the trace replaces with :data:`REDACTED`
      (they are still sent).
    - ``trace``: the run's trace context; with it every URL step call sends a W3C ``traceparent``
      naming the call's own span (replacing one the client's headers would forward) and records
      that span's id as ``span_id`` in its ``step.started``. None: no ``traceparent`` is added.
    - ``release``: the KServe release whose router the run reproduces (default the newest);
      :mod:`graphs.language.releases` lists what differs.
    """

    service_urls: Mapping[str, str] = field(default_factory=_frozen_empty)
    url_template: str = DEFAULT_URL_TEMPLATE
    namespace: str | None = None
    propagate_headers: tuple[str, ...] = ()
    step_timeout: float | None = None
    deadline: float | None = None
    body_cap: int = DEFAULT_BODY_CAP
    max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES
    max_run_bytes: int | None = None
    max_step_calls: int | None = None
    max_event_bytes: int | None = None
    limit_names: Mapping[str, str] = field(default_factory=_frozen_empty)
    guard: UrlGuard | None = None
    redact_headers: tuple[str, ...] = DEFAULT_REDACTED
    trace: TraceContext | None = None
    release: Release = DEFAULT_RELEASE
