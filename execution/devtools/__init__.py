"""The one-machine setup's tooling, apart from the product: the demo data (``demo``, with the demo
graphs' test suites in ``demotests/``), the built-in mock model server (``mockmodels``) and its demo
models (``demomodels``), and a Redis-protocol server on loopback (``localredis``).

Management commands (``seed_demo``, ``reset_demo``, ``mockmodels``, ``seed_deploy_demo``), tests,
benchmarks and ``scripts/run.sh`` use them; no other production module imports them (an import
contract in pyproject.toml checks it).
"""
