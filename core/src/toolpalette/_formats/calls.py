"""A model's tool calls in, results out, in each provider's own shapes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from toolpalette._formats.export import FORMATS, Format
from toolpalette._tools.result import ToolResult, block_text

__all__ = ["ToolCall", "calls_from", "render_result", "replies"]


class ToolCall(NamedTuple):
    """One tool call a model made; a tuple ``(name, input, id)`` as ``execute_many`` takes.

    Pass it to ``thinker.call_many([...])`` (or unpack it into ``thinker.call``), and
    turn its result into the provider's shape with [`reply()`][toolpalette.ToolCall.reply].
    """

    name: object
    """The tool name the model gave (anything: an unknown or missing name is a 404)."""
    input: Any
    """The arguments as sent: JSON text (OpenAI) or a mapping (Anthropic, MCP)."""
    id: str | None = None
    """The provider's call id, carried to the failure report and back in the reply."""
    format: Format | None = None
    """The provider format the call came in."""

    def reply(self, result: ToolResult) -> dict[str, Any]:
        """``result`` as the provider's answer to this call (see `render_result()`).

        Raises:
            ValueError: the call has no format (it was not made by `calls_from()`).
        """
        if self.format is None:
            raise ValueError("this call has no provider format; use render_result(fmt, ...)")
        return render_result(self.format, result, self.id)


def _plain(obj: Any) -> Any:
    """An SDK object (pydantic) as its JSON form; plain data as it is."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    return obj


def _field(item: Any, key: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(key, default)
    return getattr(item, key, default)


def _shape_error(fmt: str, expected: str) -> ValueError:
    return ValueError(f"not a {fmt} payload: expected {expected}")


def calls_from(fmt: Format, payload: Any) -> list[ToolCall]:
    """The tool calls in a provider's response, in the order the model made them.

    ``payload`` is what the provider's SDK returned (or its JSON form): see the module
    docstring for what each format accepts. A response without tool calls gives ``[]``.

    Raises:
        ValueError: ``fmt`` is unknown, or ``payload`` is not that format's response.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    data = _plain(payload)
    if fmt == "openai_chat":
        return _chat_calls(data)
    if fmt == "openai_responses":
        return _responses_calls(data)
    if fmt == "anthropic":
        return _anthropic_calls(data)
    return _mcp_calls(data)


def _items(data: Any, fmt: str, key: str, expected: str) -> list[Any]:
    """The list under ``key`` in ``data`` (none when absent), or ``data`` if a list."""
    if isinstance(data, Mapping):
        data = data.get(key)
    if data is None:
        return []
    if not isinstance(data, list):
        raise _shape_error(fmt, expected)
    return [_plain(item) for item in data]


def _chat_calls(data: Any) -> list[ToolCall]:
    if isinstance(data, Mapping) and "choices" in data:
        choices = data["choices"]
        if not isinstance(choices, list) or not choices:
            raise _shape_error("openai_chat", "a ChatCompletion with a choice")
        data = _plain(_field(choices[0], "message"))
    expected = "a ChatCompletion, its message, or its tool_calls"
    calls = []
    for item in _items(data, "openai_chat", "tool_calls", expected):
        function = _plain(_field(item, "function")) or {}
        calls.append(
            ToolCall(
                _field(function, "name"),
                _field(function, "arguments"),
                _field(item, "id"),
                "openai_chat",
            )
        )
    return calls


def _responses_calls(data: Any) -> list[ToolCall]:
    expected = "a Response or its output items"
    return [
        ToolCall(
            _field(item, "name"),
            _field(item, "arguments"),
            _field(item, "call_id"),
            "openai_responses",
        )
        for item in _items(data, "openai_responses", "output", expected)
        if _field(item, "type") == "function_call"
    ]


def _anthropic_calls(data: Any) -> list[ToolCall]:
    expected = "a Message or its content blocks"
    return [
        ToolCall(_field(item, "name"), _field(item, "input"), _field(item, "id"), "anthropic")
        for item in _items(data, "anthropic", "content", expected)
        if _field(item, "type") == "tool_use"
    ]


def _mcp_calls(data: Any) -> list[ToolCall]:
    if not isinstance(data, Mapping):
        raise _shape_error("mcp", "a tools/call request or its params")
    request_id: Any = None
    if "method" in data:
        if data["method"] != "tools/call":
            raise _shape_error("mcp", "a tools/call request")
        request_id = data.get("id")
        data = _plain(data.get("params")) or {}
        if not isinstance(data, Mapping):
            raise _shape_error("mcp", "a tools/call request with params")
    arguments = data.get("arguments")
    return [
        ToolCall(
            data.get("name"),
            {} if arguments is None else arguments,
            None if request_id is None else str(request_id),
            "mcp",
        )
    ]


# -- results out ----------------------------------------------------------------------


def _text(result: ToolResult) -> str:
    """The whole result as text: a failure says it failed; a success is its blocks' text."""
    if result.is_error:
        return f"Error ({result.status} {result.code}): {result.text}"
    return "\n".join(block_text(block) for block in result.content)


def render_result(fmt: Format, result: ToolResult, call_id: str | None = None) -> dict[str, Any]:
    """``result`` in ``fmt``'s own result shape, answering the call ``call_id``.

    Every content block reads the same in every format: as its
    `block_text()` (a text block its text, a text file
    a line naming it and its text, a link or a binary block one line naming it),
    except an image, which goes as the format's own image part where it has one.
    ``openai_chat``: a ``tool`` message, its content the blocks' text one per line
    (images named there); ``openai_responses``: a ``function_call_output`` item, that
    same text, or input parts (``input_text``, ``input_image``) when the result has
    images; ``anthropic``: a ``tool_result`` block (text blocks, images as image
    blocks); ``mcp``: a ``CallToolResult``, every block as it is (the JSON-RPC id is
    the server's business, so ``call_id`` is not part of it).

    Raises:
        ValueError: ``fmt`` is unknown, or it needs a call id and none was given.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "mcp":
        answer: dict[str, Any] = {"content": result.content, "isError": result.is_error}
        if result.structured is not None:
            answer["structuredContent"] = result.structured
        return answer
    if call_id is None:
        raise ValueError(f"a {fmt} result needs the id of the call it answers")
    if fmt == "openai_chat":
        return {"role": "tool", "tool_call_id": call_id, "content": _text(result)}
    if fmt == "openai_responses":
        return {
            "type": "function_call_output",
            "call_id": call_id,
            "output": _responses_output(result),
        }
    return {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": [_anthropic_block(block) for block in result.content],
        "is_error": result.is_error,
    }


def _responses_output(result: ToolResult) -> Any:
    """A Responses ``output``: the text, or input parts when the result has images."""
    blocks = result.content
    if result.is_error or not any(_is_image(b) for b in blocks):
        return _text(result)
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if _is_image(block):
            url = f"data:{block.get('mimeType')};base64,{block['data']}"
            parts.append({"type": "input_image", "image_url": url})
        else:
            parts.append({"type": "input_text", "text": block_text(block)})
    return parts


def _is_image(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "image" and isinstance(block.get("data"), str)


def _anthropic_block(block: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP-style content block as an Anthropic ``tool_result`` content block."""
    if _is_image(block):
        source = {"type": "base64", "media_type": block.get("mimeType"), "data": block["data"]}
        return {"type": "image", "source": source}
    return {"type": "text", "text": block_text(block)}


def replies(calls: Sequence[ToolCall], results: Iterable[ToolResult]) -> list[dict[str, Any]]:
    """What to append to the conversation after running ``calls``.

    One entry per call, except for Anthropic, whose ``tool_result`` blocks all go in one
    ``user`` message.

    Raises:
        ValueError: the calls and results differ in number, or a call has no format.
    """
    answered = list(results)
    if len(answered) != len(calls):
        raise ValueError(f"{len(calls)} calls but {len(answered)} results")
    rendered = [call.reply(result) for call, result in zip(calls, answered, strict=True)]
    if calls and all(call.format == "anthropic" for call in calls):
        return [{"role": "user", "content": rendered}]
    return rendered
