"""The MCP conformance suite's test server as a toolpalette pack (test only)."""
