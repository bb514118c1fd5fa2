"""MCP servers as tool providers: configurations, the client pool, providers, results.

Layered above ``_tools``, ``_run`` and ``_plugins`` and below ``_agents`` and the hub.
Importing this package (or its ``config`` and ``servers`` modules) never imports the
``mcp`` SDK; connecting to a server does, so it needs the ``mcp`` extra
(``pip install 'toolpalette[mcp]'``).
"""
