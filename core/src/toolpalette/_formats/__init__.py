"""Model providers' formats: tool schemas out, tool calls in, results back.

Each model provider (OpenAI Chat Completions, the OpenAI Responses API, Anthropic
Messages, MCP) has its own shapes for a tool's definition, a model's tool call and the
result sent back. This layer translates between them and the core's own
(``ToolProvider``, ``ToolResult``), and holds the strict schema subsets providers
enforce. It uses ``_tools`` only.
"""
