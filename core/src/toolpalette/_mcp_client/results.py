"""What an MCP ``tools/call`` answer becomes in toolpalette's pipeline.

Both failure shapes servers use end as pipeline results:

- a result with ``isError``: the content is the tool's own message to the model and is
  passed on (a :class:`~toolpalette.errors.ToolError`, status 422, code ``tool_error``);
- a JSON-RPC error: its text and data may hold anything (paths, stack traces, secrets),
  so the model reads a generic text (502, ``server_error``) and the error itself goes
  to the failure report only, as the ``ToolError``'s ``__cause__``.

A success becomes the tool's return value, which the pipeline renders under the output
cap: the structured content when the tool publishes an output schema, the text when
every block is text, and otherwise the list of content blocks, in the MCP shape
(``image``, ``audio``, ``resource_link``, ``resource``), as JSON.
"""

from __future__ import annotations

from typing import Any, Final

from toolpalette.errors import ToolError

__all__ = ["MAX_ERROR_TEXT", "error_text", "json_rpc_failure", "value_of"]

MAX_ERROR_TEXT: Final = 2000
"""An ``isError`` message longer than this is cut (it is a message, not data)."""


def value_of(result: Any, has_output_schema: bool) -> Any:
    """The return value of a successful call, or raise for an ``isError`` result.

    Raises:
        ToolError: the server marked the result ``isError``; its text is the message.
    """
    if result.is_error:
        raise ToolError(error_text(result.content) or "The tool reported an error.")
    structured = result.structured_content
    if has_output_schema and isinstance(structured, dict):
        return structured
    blocks = [block_of(b) for b in result.content]
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(b["text"] for b in blocks)
    return blocks


def block_of(block: Any) -> dict[str, Any]:
    """One content block as the MCP JSON shape (camelCase keys, no empty fields)."""
    dumped: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    dumped.pop("_meta", None)
    return dumped


def error_text(content: list[Any]) -> str:
    """The text of an ``isError`` result: its text blocks, cut to :data:`MAX_ERROR_TEXT`."""
    text = "\n".join(b.text for b in content if getattr(b, "type", None) == "text").strip()
    if len(text) > MAX_ERROR_TEXT:
        text = text[: MAX_ERROR_TEXT - 1] + "…"
    return text


def json_rpc_failure(tool_name: str, server: str) -> ToolError:
    """The error a model reads for a JSON-RPC error: no text or data of the server's."""
    return ToolError(
        f"Tool '{tool_name}' failed on its MCP server '{server}'. "
        "The details were reported to the host.",
        code="server_error",
        status=502,
    )
