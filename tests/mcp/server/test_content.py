"""A pack's prompts and resources over MCP, on both eras: listed, paged, read, completed.

The packs' prompts come after the skills' and their resources beside the skill files;
a read-only server lists only those declared read-only; a pack function that fails is
logged, and the client gets a plain error that repeats nothing it sent.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import content_fixture as fx
import mcp_types as types
import pytest
import toolpalette.mcp
from mcp import Client
from mcp.shared.exceptions import MCPError
from toolpalette import ToolHub

ERAS = ["legacy", "auto"]


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False)
    hub.add_plugin(fx, name="docs")
    return hub


@asynccontextmanager
async def connect(server: Any, mode: str) -> AsyncIterator[Client]:
    async with Client(server, mode=mode) as client:
        yield client


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("thinker", [fx.ByPack, fx.Docs])
async def test_a_prompt_with_arguments_is_listed_and_rendered(
    hub: ToolHub, mode: str, thinker: type
):
    async with connect(toolpalette.mcp.server(hub, thinker), mode) as client:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        got = await client.get_prompt("review", {"code": "print(1)"})
        other = await client.get_prompt("review", {"code": "x", "language": "rust"})
    assert sorted(listed) == ["review", "with_image", "with_resource"]
    review = listed["review"]
    assert review.description == "Review a piece of code."
    assert [(a.name, a.description, a.required) for a in review.arguments or []] == [
        ("code", "the code to review.", True),
        ("language", "the language it is written in.", False),
    ]
    assert listed["with_image"].title == "A picture"
    [message] = got.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "Review this python code:\nprint(1)"
    assert isinstance(other.messages[0].content, types.TextContent)
    assert other.messages[0].content.text.startswith("Review this rust code")


@pytest.mark.parametrize("mode", ERAS)
async def test_prompts_carry_images_and_embedded_resources(hub: ToolHub, mode: str):
    async with connect(toolpalette.mcp.server(hub, fx.ByPack), mode) as client:
        image = await client.get_prompt("with_image")
        embedded = await client.get_prompt("with_resource")
    assert isinstance(image.messages[1].content, types.ImageContent)
    assert base64.b64decode(image.messages[1].content.data) == fx.PNG
    assert image.messages[1].content.mime_type == "image/png"
    block = embedded.messages[0].content
    assert isinstance(block, types.EmbeddedResource)
    assert isinstance(block.resource, types.TextResourceContents)
    assert (str(block.resource.uri), block.resource.text) == ("docs://guide", fx.guide())
    assert embedded.messages[1].role == "assistant"


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [({}, "missing required argument(s): code"), ({"code": "x", "lang": "y"}, "unknown")],
)
async def test_bad_prompt_arguments_are_invalid_params(
    hub: ToolHub, mode: str, arguments: dict[str, str], expected: str
):
    async with connect(toolpalette.mcp.server(hub, fx.ByPack), mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("review", arguments)
    assert caught.value.code == types.INVALID_PARAMS
    assert expected in caught.value.message


@pytest.mark.parametrize("mode", ERAS)
async def test_static_binary_and_templated_resources_are_read(hub: ToolHub, mode: str):
    async with connect(toolpalette.mcp.server(hub, fx.ByPack), mode) as client:
        listed = sorted(str(r.uri) for r in (await client.list_resources()).resources)
        templates = (await client.list_resource_templates()).resource_templates
        text = (await client.read_resource("docs://guide")).contents[0]
        blob = (await client.read_resource("docs://logo")).contents[0]
        profile = (await client.read_resource("users://ada/profile")).contents[0]
    assert listed == ["admin://reset", "docs://guide", "docs://logo"]
    assert [(t.uri_template, t.name) for t in templates] == [("users://{id}/profile", "profile")]
    assert isinstance(text, types.TextResourceContents)
    assert (text.text, text.mime_type) == (fx.guide(), "text/markdown")
    assert isinstance(blob, types.BlobResourceContents)
    assert base64.b64decode(blob.blob) == fx.PNG
    assert isinstance(profile, types.TextResourceContents)
    assert json.loads(profile.text) == {"id": "ada", "name": "Ada Lovelace"}
    assert profile.mime_type == "application/json"


@pytest.mark.parametrize("mode", ERAS)
async def test_an_unknown_or_failing_resource_is_an_error_that_repeats_nothing(
    hub: ToolHub, mode: str, caplog: pytest.LogCaptureFixture
):
    async with connect(toolpalette.mcp.server(hub, fx.ByPack), mode) as client:
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("docs://nothing-here")
        with pytest.raises(MCPError) as failing:
            await client.read_resource("users://mallory-9d2/profile")
    # SEP-2164: 2026-07-28 says -32602 (with the URI in the data), the 2025 era -32002.
    assert unknown.value.code == (-32002 if mode == "legacy" else types.INVALID_PARAMS)
    assert failing.value.code == types.INTERNAL_ERROR
    assert "mallory" not in failing.value.message
    assert "resource users://{id}/profile raised" in caplog.text


@pytest.mark.parametrize("mode", ERAS)
async def test_completions_of_prompt_arguments_and_template_parameters(hub: ToolHub, mode: str):
    async with connect(toolpalette.mcp.server(hub, fx.ByPack), mode) as client:
        language = await client.complete(
            types.PromptReference(type="ref/prompt", name="review"),
            {"name": "language", "value": "p"},
        )
        user = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="users://{id}/profile"),
            {"name": "id", "value": "a"},
        )
        nothing = await client.complete(
            types.PromptReference(type="ref/prompt", name="review"),
            {"name": "code", "value": ""},
        )
    assert language.completion.values == ["python", "perl"]
    assert user.completion.values == ["ada", "alan"]
    assert nothing.completion.values == []


@pytest.mark.parametrize("mode", ERAS)
async def test_a_read_only_server_lists_only_read_only_resources(hub: ToolHub, mode: str):
    server = toolpalette.mcp.server(hub, fx.ByPack, read_only=True)
    async with connect(server, mode) as client:
        listed = sorted(str(r.uri) for r in (await client.list_resources()).resources)
        with pytest.raises(MCPError) as caught:
            await client.read_resource("admin://reset")
    assert listed == ["docs://guide", "docs://logo"]
    assert caught.value.code == (-32002 if mode == "legacy" else types.INVALID_PARAMS)


@pytest.mark.parametrize("mode", ERAS)
async def test_prompts_and_resources_are_paged(hub: ToolHub, mode: str):
    server = toolpalette.mcp.server(hub, fx.ByPack, page_size=2)
    async with connect(server, mode) as client:
        first = await client.list_prompts()
        assert first.next_cursor is not None
        second = await client.list_prompts(cursor=first.next_cursor)
        resources = await client.list_resources()
        with pytest.raises(MCPError) as caught:
            await client.list_prompts(cursor="tp1.bm90LWEtY3Vyc29y")
    assert [p.name for p in first.prompts + second.prompts] == [
        "review",
        "with_image",
        "with_resource",
    ]
    assert second.next_cursor is None
    assert len(resources.resources) == 2
    assert resources.next_cursor is not None
    assert caught.value.code == types.INVALID_PARAMS


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # 2025 only
async def test_a_2025_session_subscribes_to_an_offered_resource_only(hub: ToolHub):
    async with connect(toolpalette.mcp.server(hub, fx.ByPack), "legacy") as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.resources is not None
        await client.subscribe_resource("docs://guide")
        await client.unsubscribe_resource("docs://guide")
        with pytest.raises(MCPError) as caught:
            await client.subscribe_resource("docs://nothing-here")
    assert caught.value.code == -32002
