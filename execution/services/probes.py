"""Test connection: probe the model servers an environment maps (readiness, protocol, v2 metadata).

The calls go through the one outbound client (:func:`execution.engine.transport.http.make_client`) with the
environment's own URL guard, so a probe reaches exactly what a run in that environment may reach,
and no further. Writes nothing.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Final

from django.conf import settings

from execution.engine.probe import ProbeTarget, probe_all
from execution.engine.transport.http import make_client
from execution.errors import InvalidInput
from execution.models import Environment
from execution.services.environments import environment_config, guard_from_config
from execution.services.run_request import issue

# A KServe serviceName (an InferenceService's name, a DNS-1123 label) or any name a service map
# may hold; enough to keep a probe URL from being steered by the query string.
SERVICE_NAME: Final = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$")


def probe_targets(environment: Environment, service: str | None = None) -> list[ProbeTarget]:
    """The services to probe: every one the environment maps, by name; or only ``service``,
    through the map or else the URL template, as a run would resolve it. InvalidInput (400) for a
    name that cannot be a serviceName."""
    config = environment_config(environment)
    mapped: dict[str, str] = config["service_urls"]
    if service is None:
        return [ProbeTarget(name, mapped[name]) for name in sorted(mapped)]
    if not SERVICE_NAME.fullmatch(service):
        raise InvalidInput(
            f"{service!r} is not a service name.",
            issues=[issue("service", "not a service name", "probe.service-invalid")],
        )
    url = mapped.get(service)
    if url is None:
        namespace = config["namespace"] or "default"
        url = config["url_template"].replace("{name}", service).replace("{namespace}", namespace)
    return [ProbeTarget(service, url)]


def environment_probe(*, environment: Environment, service: str | None = None) -> dict[str, Any]:
    """Probe the services (:func:`probe_targets`) in parallel, bounded by the PROBE_* settings.

    Returns ``{"environment", "services": [result, ...]}`` (see :class:`ProbeResult`); every
    failure of a server is in its result, never raised. Blocks the calling thread for at most
    PROBE_TOTAL_TIMEOUT seconds (and the time to cancel what is still running then).
    """
    targets = probe_targets(environment, service)
    config = environment_config(environment)
    timeout = float(settings.PROBE_TIMEOUT)

    async def main() -> list[dict[str, Any]]:
        client = make_client(
            timeout=timeout,
            max_connections=max(1, settings.PROBE_CONCURRENCY),
            max_response_bytes=settings.PROBE_MAX_RESPONSE_BYTES,
            guard=guard_from_config(config),
        )
        try:
            results = await probe_all(
                client,
                targets,
                timeout=timeout,
                concurrency=settings.PROBE_CONCURRENCY,
                total=float(settings.PROBE_TOTAL_TIMEOUT),
            )
        finally:
            await client.aclose()
        return [result.to_dict() for result in results]

    return {"environment": environment.name, "services": asyncio.run(main())}
