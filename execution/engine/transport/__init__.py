"""The engine's outbound HTTP client: every step call leaves through it (docs/architecture.md,
"The outbound client").

From the outside in: :mod:`.outbound` sends a call as Go's client would (its headers, its
redirects) and :mod:`.causes` words a failure as Go's error; :mod:`.http` builds the one client
(``make_client``: the URL guard of :mod:`.urlguard`, the size cap and byte budget, ``http://`` and
``https://`` pools); :mod:`.plainpool` is the ``http://`` keep-alive pool, :mod:`.h1` its common
exchange without h11, :mod:`.wire` its sockets; :mod:`.privates` takes every private httpx and
httpcore name the others plug into.

It knows nothing of graphs, routers or traces (an import contract in ``pyproject.toml`` checks
that nothing here imports the interpreter above it); the Go ports below it are the only part of the
engine it uses.
"""
