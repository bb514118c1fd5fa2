"""MCP servers as tool providers: configurations, connections, providers, results.

Layered above ``_tools``, ``_run`` and ``_plugins`` and below ``_agents`` and the hub.
A hub's servers (``servers``) list their tools through one pool (``pool``) of
connections (``connection``), which live on one event loop in a thread of its own
(``loop``) and reach their servers through ``transports``. Importing this package (or
any of its modules) never imports the ``mcp`` SDK; connecting to a server does, so it
needs the ``mcp`` extra (``pip install 'toolpalette[mcp]'``).
"""
