"""The HTTP server under real clients: load and soak (Locust), and the conformance suite.

``python -m bench.load`` runs the load cases or the soak (``nox -s load``);
``python -m bench.load.conformance`` runs the MCP conformance suite's server scenarios
(``nox -s conformance``). See ``bench/README.md``.
"""
