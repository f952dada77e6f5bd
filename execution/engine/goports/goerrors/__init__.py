"""Error causes worded like the Go router's (docs/router-semantics.md, "Outbound calls"), byte for byte where Go decides
without the network.

KServe's ``callService`` runs ``url.Parse``, ``http.NewRequest`` and ``http.Client.Do``; the first
failure becomes the cause. :func:`go_url_error` follows those steps for everything Go refuses
before it sends a packet (Go 1.19 net/url, net/http and net's address checks);
:func:`go_request_url` is the URL as Go's errors print it. Every case is checked against KServe's
router (``tests/engine/data/go_url_errors.json``).

The package follows Go's layers: :mod:`.url` (``strconv.Quote`` and ``net/url``) and :mod:`.dial`
(what ``http.NewRequest`` and the dialer refuse before any packet). The cause of a failed call
(``http.Client.Do``'s error) is worded by the transport itself
(:func:`execution.engine.transport.causes.transport_cause`, checked against
``go_transport_errors.json``): it reads the transport's own exceptions, and this package knows
nothing of them.
"""

from __future__ import annotations

from execution.engine.goports.goerrors.dial import go_parse_error, go_url_error
from execution.engine.goports.goerrors.url import go_basic_auth, go_quote, go_request_url

__all__ = ["go_basic_auth", "go_parse_error", "go_quote", "go_request_url", "go_url_error"]
