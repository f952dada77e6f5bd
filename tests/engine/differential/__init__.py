"""A seeded differential test of the engine against KServe's own router (``../shared/oracle``).

- :mod:`.generator`: graphs and requests from a seed (the normal set and the deviation set);
- :mod:`.stepserver`: the step behaviours, served by one loopback server;
- :mod:`.harness`: the oracle process, the engine as ``servegraph`` serves it, the comparison;
- :mod:`.report`: divergence classes, shrunk examples written to ``test-artifacts/differential``;
- :mod:`.run`: one whole run; ``python -m tests.engine.differential`` prints its table.
"""
