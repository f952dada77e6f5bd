"""Ports of the Go the KServe router runs, each checked against the Go original byte for byte.

- :mod:`.gjson`: ``github.com/tidwall/gjson``, the paths Switch and Sequence conditions are
  decided with;
- :mod:`.gojson`: Go's ``encoding/json`` as the router reads and writes bodies;
- :mod:`.goerrors`: what Go's ``net/url``, ``http.NewRequest`` and dialer refuse before a packet
  is sent, and the URL as Go's errors print it;
- :mod:`.sniff`: the Content-Type Go's ``http.ResponseWriter`` gives the router's answer.

Pure standard library: no HTTP client, no graph, nothing of the interpreter or the transport above
them (import contracts in ``pyproject.toml`` check both), so each port can be read and tested
against Go alone.
"""
