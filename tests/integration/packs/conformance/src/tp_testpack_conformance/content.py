"""The suite's prompts and ``test://`` resources."""

from __future__ import annotations

import json

import toolpalette
from toolpalette import Image, ToolContext

from tp_testpack_conformance.media import PNG


@toolpalette.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@toolpalette.prompt(completions={"arg1": ["paris", "park", "party"]})
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument
        arg2: Second test argument
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@toolpalette.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[object]:
    """A prompt that embeds a resource.

    Args:
        resourceUri: URI of the resource to embed
    """
    block = {
        "type": "resource",
        "resource": {
            "uri": resourceUri,
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        },
    }
    return [block, "Please process the embedded resource above."]


@toolpalette.prompt
def test_prompt_with_image() -> list[object]:
    """A prompt with an image."""
    return [Image(PNG, "image/png"), "Please analyze the image above."]


@toolpalette.resource("test://static-text", mime_type="text/plain", name="static-text")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@toolpalette.resource("test://static-binary", mime_type="image/png", name="static-binary")
def static_binary() -> bytes:
    """A static binary resource (a PNG image)."""
    return PNG


@toolpalette.resource("test://watched-resource", mime_type="text/plain", name="watched-resource")
def watched_resource() -> str:
    """A resource clients may subscribe to."""
    return "Watched resource content."


@toolpalette.resource(
    "test://template/{id}/data", mime_type="application/json", name="template-data"
)
def template_data(id: str) -> str:
    """Data for one id."""
    return json.dumps(
        {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":")
    )


@toolpalette.prompt
async def test_input_required_result_prompt(ctx: ToolContext) -> str:
    """A prompt that asks the user for its context first."""
    form = {
        "type": "object",
        "properties": {"context": {"type": "string"}},
        "required": ["context"],
    }
    answer = await ctx.elicit("What context should the prompt use?", form, key="user_context")
    return f"Use this context: {(answer.content or {}).get('context')}"


PROMPTS = (
    test_input_required_result_prompt,
    test_simple_prompt,
    test_prompt_with_arguments,
    test_prompt_with_embedded_resource,
    test_prompt_with_image,
)
RESOURCES = (static_text, static_binary, watched_resource, template_data)
