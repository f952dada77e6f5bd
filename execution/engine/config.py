"""Engine configuration: everything a run needs to know that is not in the graph."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from execution.engine.http import DEFAULT_MAX_RESPONSE_BYTES
from execution.engine.urlguard import UrlGuard

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
    - ``guard``: the URL guard applied to every step URL before connecting (None: no guard).
    - ``redact_headers``: header names whose values the trace replaces with :data:`REDACTED`
      (they are still sent).
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
    guard: UrlGuard | None = None
    redact_headers: tuple[str, ...] = DEFAULT_REDACTED
