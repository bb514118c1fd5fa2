"""MCP servers as tool providers: configurations, connections, providers, results.

Importing it never imports the ``mcp`` SDK; connecting to a server does (the ``mcp`` extra).
"""
