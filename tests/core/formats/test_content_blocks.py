"""Every content block reads the same in every provider format: one rendering, one text.

A result holding text, an image, an audio clip, a text file, a file of bytes and a
resource link, made by a tool through the pipeline: each format shows each block as the
result's own text shows it (images as the format's image parts where it has them), and
the provider SDKs' own types accept what is rendered.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

pytest.importorskip("anthropic", reason="anthropic is not installed on this Python")
pytest.importorskip("openai", reason="openai is not installed on this Python")

from anthropic.types import ToolResultBlockParam
from openai.types.chat import ChatCompletionToolMessageParam
from openai.types.responses import ResponseInputItemParam
from pydantic import TypeAdapter
from toolpalette import (
    Audio,
    Executor,
    File,
    Image,
    ResourceLink,
    ToolRegistry,
    ToolResult,
    render_result,
    tool,
)

PNG = b"\x89PNG fake"
WAV = b"RIFF....WAVE"
LINK = ResourceLink("https://example.com/docs/r.md", "readme", mime_type="text/markdown")

# What a reader of text alone reads for each item below, in order: the one rendering.
TEXTS = [
    "Here is everything:",
    f"[image: image/png, {len(PNG)} bytes]",
    f"[audio: audio/wav, {len(WAV)} bytes]",
    "[file data.csv: text/csv, 8 bytes]\na,b\n1,2\n",
    "[file raw.bin: application/octet-stream, 2 bytes]",
    "[resource link: readme <https://example.com/docs/r.md>]",
]


@tool(read_only=True, output_cap=100_000)
def everything() -> list[str | Image | Audio | File | ResourceLink]:
    """Return one block of each kind."""
    return [
        "Here is everything:",
        Image(PNG, "image/png"),
        Audio(WAV, "audio/wav"),
        File("a,b\n1,2\n", "data.csv", "text/csv"),
        File(b"\x00\x01", "raw.bin"),
        LINK,
    ]


@tool(read_only=True)
def no_image() -> list[str | File | ResourceLink]:
    """Return text, a file and a link, no image."""
    return ["Two more:", File("a,b\n1,2\n", "data.csv", "text/csv"), LINK]


def result_of(name: str) -> ToolResult:
    result = Executor(ToolRegistry([everything, no_image])).execute_sync(name, {})
    assert not result.is_error, result
    return result


def test_the_result_text_is_each_blocks_text_one_per_line() -> None:
    result = result_of("everything")
    assert [b["type"] for b in result.content] == [
        "text",
        "image",
        "audio",
        "resource",
        "resource",
        "resource_link",
    ]
    assert result.text == "\n".join(TEXTS)
    assert result.content[5] == {
        "type": "resource_link",
        "uri": "https://example.com/docs/r.md",
        "name": "readme",
        "mimeType": "text/markdown",
    }


def test_openai_chat_reads_the_blocks_text() -> None:
    message = render_result("openai_chat", result_of("everything"), "call_1")
    assert message["content"] == "\n".join(TEXTS)
    TypeAdapter(ChatCompletionToolMessageParam).validate_python(message)


def test_openai_responses_reads_each_block_as_text_but_the_image() -> None:
    item = render_result("openai_responses", result_of("everything"), "call_1")
    data = base64.b64encode(PNG).decode()
    expected: list[dict[str, Any]] = [{"type": "input_text", "text": t} for t in TEXTS]
    expected[1] = {"type": "input_image", "image_url": f"data:image/png;base64,{data}"}
    assert item["output"] == expected
    TypeAdapter(ResponseInputItemParam).validate_python(item)


def test_anthropic_reads_each_block_as_text_but_the_image() -> None:
    block = render_result("anthropic", result_of("everything"), "toolu_1")
    data = base64.b64encode(PNG).decode()
    expected: list[dict[str, Any]] = [{"type": "text", "text": t} for t in TEXTS]
    expected[1] = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": data},
    }
    assert block["content"] == expected
    assert block["is_error"] is False
    TypeAdapter(ToolResultBlockParam).validate_python(block)


def test_mcp_passes_every_block_on_as_it_is() -> None:
    result = result_of("everything")
    assert render_result("mcp", result) == {"content": result.content, "isError": False}


@pytest.mark.parametrize("fmt", ["openai_chat", "openai_responses", "anthropic"])
def test_without_an_image_every_format_reads_the_same_text(fmt: Any) -> None:
    result = result_of("no_image")
    expected = ["Two more:", TEXTS[3], TEXTS[5]]
    assert result.text == "\n".join(expected)
    rendered = render_result(fmt, result, "call_1")
    if fmt == "openai_chat":
        assert rendered["content"] == result.text
    elif fmt == "openai_responses":
        assert rendered["output"] == result.text
    else:
        assert [b["text"] for b in rendered["content"]] == expected


def test_a_hand_made_result_reads_its_blocks_not_a_stale_text() -> None:
    image = Image(PNG, "image/png").block()
    result = ToolResult("stale", content=[{"type": "text", "text": "A chart."}, image])
    assert render_result("openai_chat", result, "c")["content"] == "\n".join(["A chart.", TEXTS[1]])


def test_failures_keep_their_text_in_every_format() -> None:
    failed = ToolResult.failure(400, "invalid_input", "Field `city` is required (a string).")
    assert render_result("openai_chat", failed, "c")["content"] == (
        "Error (400 invalid_input): Field `city` is required (a string)."
    )
    anthropic = render_result("anthropic", failed, "t")
    assert anthropic["content"] == [{"type": "text", "text": failed.text}]
    assert anthropic["is_error"] is True


def test_a_link_needs_a_uri_and_a_name() -> None:
    with pytest.raises(ValueError, match="uri"):
        ResourceLink("", "x")
    with pytest.raises(TypeError, match="name"):
        ResourceLink("https://example.com", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="type/subtype"):
        ResourceLink("https://example.com", "x", mime_type="markdown")
    assert ResourceLink("a:b", "x", title="Readme").summary() == "[resource link: Readme <a:b>]"
