"""What an MCP ``tools/call`` answer becomes in toolpalette's pipeline."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from toolpalette._tools.result import Audio, File, Image, ResourceLink, file_name, is_wrapped
from toolpalette.errors import ToolError

__all__ = ["MAX_ERROR_TEXT", "error_text", "json_rpc_failure", "value_of"]

MAX_ERROR_TEXT: Final = 2000
"""An ``isError`` message longer than this is cut (it is a message, not data)."""


def value_of(result: Any, output_schema: Mapping[str, Any] | None) -> Any:
    """The return value of a successful call, or raise for an ``isError`` result.

    Structured content under an output schema marked ``x-toolpalette-wrapped`` (a
    toolpalette server's list, number or date) is unwrapped: the value is its
    ``result``, as the tool returned it (the pipeline wraps it again for the result's
    ``structured``, under the same schema).

    Raises:
        ToolError: the server marked the result ``isError``; its text is the message.
    """
    if result.is_error:
        raise ToolError(error_text(result.content) or "The tool reported an error.")
    structured = result.structured_content
    if output_schema is not None and isinstance(structured, dict):
        if is_wrapped(output_schema) and "result" in structured:
            return structured["result"]
        return structured
    content = result.content
    # Text blocks alone (the common answer) are read as they are, without a dump each.
    if all(getattr(b, "type", None) == "text" for b in content):
        return "\n".join(b.text for b in content)
    try:
        return [content_of(block_of(b)) for b in content]
    except (TypeError, ValueError) as exc:
        raise _invalid_content() from exc


def content_of(block: dict[str, Any]) -> str | Image | Audio | File | ResourceLink:
    """One MCP content block as toolpalette's own content (see the module docstring).

    Raises:
        ToolError: a binary block whose data is not base64 (502 ``server_error``).
        ValueError: a MIME type the content type refuses (``image`` data as ``text/x``).
    """
    kind = block.get("type")
    if kind == "image":
        return Image(_decoded(block.get("data")), _mime(block, "image/png"))
    if kind == "audio":
        return Audio(_decoded(block.get("data")), _mime(block, "audio/wav"))
    if kind == "resource":
        resource = block.get("resource") or {}
        name = file_name(str(resource.get("uri", "")))
        text = resource.get("text")
        if isinstance(text, str):
            return File(text, name, _mime(resource, "text/plain"))
        return File(
            _decoded(resource.get("blob")), name, _mime(resource, "application/octet-stream")
        )
    if kind == "resource_link":
        return _link(block)
    return str(block.get("text", ""))


def _link(block: dict[str, Any]) -> ResourceLink:
    """A ``resource_link`` block as a link; a MIME type the link refuses is left out."""
    uri = str(block.get("uri") or "")
    name = str(block.get("name") or file_name(uri))
    title, description = block.get("title"), block.get("description")
    try:
        return ResourceLink(
            uri, name, title=title, description=description, mime_type=block.get("mimeType")
        )
    except ValueError:
        return ResourceLink(uri, name, title=title, description=description)


def _decoded(data: object) -> bytes:
    try:
        if not isinstance(data, str):
            raise binascii.Error("not text")
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _invalid_content() from exc


def _mime(block: dict[str, Any], default: str) -> str:
    mime = block.get("mimeType")
    return mime if isinstance(mime, str) and "/" in mime else default


def _invalid_content() -> ToolError:
    return ToolError(
        "The MCP server sent content that could not be read. The details were reported "
        "to the host.",
        code="server_error",
        status=502,
    )


def block_of(block: Any) -> dict[str, Any]:
    """One content block as the MCP JSON shape (camelCase keys, no empty fields)."""
    dumped: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    dumped.pop("_meta", None)
    return dumped


def error_text(content: list[Any]) -> str:
    """The text of an ``isError`` result: its text blocks, cut to `MAX_ERROR_TEXT`."""
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
