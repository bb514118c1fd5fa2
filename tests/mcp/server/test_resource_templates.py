"""``resources/templates/list`` and ``logging/setLevel``, through the SDK's own client.

The server advertises resources (the skills' files), so a client may ask for resource
templates: it gets the ``skill://{bundle}/{skill}/{path}`` template when the palette has
skills, an empty list when it has none, in both protocol eras; a URI expanded from the
template reads the file. A handshake-era client may set a log level: it is accepted.
"""

from __future__ import annotations

import warnings
from urllib.parse import quote

import palette_fixture as fx
import pytest
import toolpalette.mcp
from mcp import Client
from toolpalette import ToolHub

ERAS = ["legacy", "auto"]
SKILL = "io.toolpalette.sql/explore-sqlite-schema"
FILE = "references/catalog-queries.md"


@pytest.fixture(scope="module")
def hub() -> ToolHub:
    return ToolHub()


def expand(template: str, **values: str) -> str:
    """RFC 6570 simple expansion, which quotes every reserved character (``/`` too)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", quote(value, safe=""))
    return template


@pytest.mark.parametrize("mode", ERAS)
async def test_a_palette_with_skills_lists_the_skill_file_template(hub: ToolHub, mode: str):
    async with Client(toolpalette.mcp.server(hub, fx.Palette), mode=mode) as client:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["skill://{bundle}/{skill}/{path}"]
        bundle, _, skill = SKILL.partition("/")
        uri = expand(templates[0].uri_template, bundle=bundle, skill=skill, path=FILE)
        assert "%2F" in uri  # the path's slash quoted, as a template client sends it
        read = await client.read_resource(uri)
    assert read.contents[0].text == hub.skills().skill(SKILL).read_text(FILE)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_palette_without_skills_lists_no_template(hub: ToolHub, mode: str):
    async with Client(toolpalette.mcp.server(hub, fx.Many), mode=mode) as client:
        assert client.server_capabilities.resources is not None
        assert (await client.list_resource_templates()).resource_templates == []


async def test_a_handshake_era_client_may_set_a_log_level(hub: ToolHub):
    async with Client(toolpalette.mcp.server(hub, fx.Palette), mode="legacy") as client:
        assert client.server_capabilities.logging is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks logging deprecated from 2026-07-28
            await client.set_logging_level("info")
        assert (await client.call_tool("echo", {"text": "still serving"})).content[0].text == (
            "still serving"
        )
