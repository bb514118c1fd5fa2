"""The suite's test tools, each through the public pack API only."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import toolpalette
from toolpalette import Audio, ClientRequestError, File, Image, ToolContext, ToolError

from tp_testpack_conformance.media import PNG, WAV

NAME_FORM = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


@toolpalette.tool(read_only=True)
def test_simple_text() -> str:
    """Return a simple text."""
    return "This is a simple text response for testing."


@toolpalette.tool(read_only=True)
def test_image_content() -> Image:
    """Return an image."""
    return Image(PNG, "image/png")


@toolpalette.tool(read_only=True)
def test_audio_content() -> Audio:
    """Return audio."""
    return Audio(WAV, "audio/wav")


@toolpalette.tool(read_only=True)
def test_embedded_resource() -> File:
    """Return an embedded resource."""
    text = "This is an embedded resource content."
    return File(text, "embedded-resource", "text/plain", uri="test://embedded-resource")


@toolpalette.tool(read_only=True)
def test_multiple_content_types() -> list[object]:
    """Return text, an image and an embedded resource."""
    data = json.dumps({"test": "data", "value": 123}, separators=(",", ":"))
    resource = File(
        data, "mixed-content-resource", "application/json", uri="test://mixed-content-resource"
    )
    return ["Multiple content types test:", Image(PNG, "image/png"), resource]


@toolpalette.tool(read_only=True)
async def test_tool_with_logging(ctx: ToolContext) -> str:
    """Send three log lines while running."""
    ctx.log("info", "Tool execution started")
    await asyncio.sleep(0.05)
    ctx.log("info", "Tool processing data")
    await asyncio.sleep(0.05)
    ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@toolpalette.tool(read_only=True)
def test_error_handling() -> str:
    """Always fail."""
    raise ToolError("This tool intentionally returns an error for testing")


@toolpalette.tool(read_only=True)
async def test_tool_with_progress(ctx: ToolContext) -> str:
    """Report progress 0, 50 and 100 of 100."""
    ctx.report_progress(0, 100)
    await asyncio.sleep(0.05)
    ctx.report_progress(50, 100)
    await asyncio.sleep(0.05)
    ctx.report_progress(100, 100)
    return "Tool with progress executed successfully"


@toolpalette.tool(read_only=True)
async def test_sampling(prompt: str, ctx: ToolContext) -> str:
    """Ask the client's model.

    Args:
        prompt: The prompt to send to the LLM
    """
    sampled = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {sampled.text}"


@toolpalette.tool(read_only=True)
async def test_elicitation(message: str, ctx: ToolContext) -> str:
    """Ask the user.

    Args:
        message: The message to show the user
    """
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, schema)
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


@toolpalette.tool(read_only=True)
async def test_elicitation_sep1034_defaults(ctx: ToolContext) -> str:
    """Ask with a default for every primitive type (SEP-1034)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    }
    answer = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@toolpalette.tool(read_only=True)
async def test_elicitation_sep1330_enums(ctx: ToolContext) -> str:
    """Ask with every enum form (SEP-1330)."""
    options = [("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")]
    choices = [("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [{"const": v, "title": t} for v, t in options],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {"anyOf": [{"const": v, "title": t} for v, t in choices]},
            },
        },
    }
    answer = await ctx.elicit("Please select options from the enum fields", schema)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def _received(**value: Any) -> str:
    return f"received {sorted(value)}"


json_schema_2020_12_tool = toolpalette.function_tool(
    "json_schema_2020_12_tool",
    "Tool with JSON Schema 2020-12 features",
    JSON_SCHEMA_2020_12,
    _received,
    read_only=True,
)


@toolpalette.tool(read_only=True)
async def test_missing_capability(ctx: ToolContext) -> str:
    """Needs sampling, and does not go on without it."""
    sampled = await ctx.sample("ping", max_tokens=5)
    return sampled.text or ""


@toolpalette.tool(
    read_only=True,
    refine_schema=lambda schema: schema["properties"]["region"].update({"x-mcp-header": "Region"}),
)
def test_custom_headers(region: str) -> str:
    """Echo a parameter the client mirrors into the Mcp-Param-Region header.

    Args:
        region: where the request is for
    """
    return f"region {region}"


# -- 2026-07-28: questions as input requests ---------------------------------------------


@toolpalette.tool(read_only=True)
async def test_input_required_result_elicitation(ctx: ToolContext) -> str:
    """Ask the user's name."""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {(answer.content or {}).get('name')}!"


@toolpalette.tool(read_only=True)
async def test_input_required_result_sampling(ctx: ToolContext) -> str:
    """Ask the client's model a question."""
    sampled = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"The model said: {sampled.text}"


@toolpalette.tool(read_only=True)
async def test_input_required_result_list_roots(ctx: ToolContext) -> str:
    """Read the client's roots."""
    roots = await ctx.roots(key="client_roots")
    return "Roots: " + ", ".join(root.uri for root in roots)


@toolpalette.tool(read_only=True)
async def test_input_required_result_request_state(ctx: ToolContext) -> str:
    """Ask for a confirmation; the retry's sealed state is checked by the server."""
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answer = await ctx.elicit("Please confirm", form, key="confirm")
    return f"state-ok: {(answer.content or {}).get('ok')}"


@toolpalette.tool(read_only=True)
async def test_input_required_result_multiple_inputs(ctx: ToolContext) -> str:
    """Ask three things in one round."""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", NAME_FORM, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.roots(key="client_roots"),
    )
    who = (name.content or {}).get("name")
    return f"{greeting.text} {who} ({len(roots)} roots)"


@toolpalette.tool(read_only=True)
async def test_input_required_result_multi_round(ctx: ToolContext) -> str:
    """Ask two questions, one round each."""
    first = await ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
    color_form = {
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"],
    }
    second = await ctx.elicit("Step 2: What is your favorite color?", color_form, key="step2")
    name = (first.content or {}).get("name")
    return f"{name} likes {(second.content or {}).get('color')}"


@toolpalette.tool(read_only=True)
async def test_input_required_result_tampered_state(ctx: ToolContext) -> str:
    """Ask for a confirmation (its state is sealed: a tampered one is refused)."""
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answer = await ctx.elicit("Please confirm", form, key="confirm")
    return f"confirmed: {(answer.content or {}).get('ok')}"


@toolpalette.tool(read_only=True)
async def test_input_required_result_capabilities(ctx: ToolContext) -> str:
    """Ask only through what the client declared."""
    parts = []
    try:
        answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        parts.append(str((answer.content or {}).get("name")))
    except ClientRequestError:
        parts.append("no elicitation")
    try:
        sampled = await ctx.sample("Say hello", max_tokens=20, key="hello")
        parts.append(sampled.text or "")
    except ClientRequestError:
        parts.append("no sampling")
    return ", ".join(parts)


@toolpalette.tool(read_only=True)
async def test_streaming_elicitation(ctx: ToolContext) -> str:
    """Ask the user while the call's response stream is open."""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {(answer.content or {}).get('name')}!"


@toolpalette.tool(read_only=True)
def test_logging_tool(ctx: ToolContext) -> str:
    """Log a line (sent only when the request asks for log lines)."""
    ctx.log("info", "a log line")
    return "logged"


TOOLS = (
    test_streaming_elicitation,
    test_logging_tool,
    test_simple_text,
    test_image_content,
    test_audio_content,
    test_embedded_resource,
    test_multiple_content_types,
    test_tool_with_logging,
    test_error_handling,
    test_tool_with_progress,
    test_sampling,
    test_elicitation,
    test_elicitation_sep1034_defaults,
    test_elicitation_sep1330_enums,
    json_schema_2020_12_tool,
    test_missing_capability,
    test_custom_headers,
    test_input_required_result_elicitation,
    test_input_required_result_sampling,
    test_input_required_result_list_roots,
    test_input_required_result_request_state,
    test_input_required_result_multiple_inputs,
    test_input_required_result_multi_round,
    test_input_required_result_tampered_state,
    test_input_required_result_capabilities,
)


# -- the tasks extension (SEP-2663) ------------------------------------------------------


@toolpalette.tool(read_only=True)
def greet(name: str) -> str:
    """Greet someone (never a task)."""
    return f"Hello, {name}!"


@toolpalette.tool(read_only=True, task_support="optional", timeout=300)
async def slow_compute(seconds: float, label: str = "") -> str:
    """Sleep ``seconds`` seconds, then answer (a task when the client supports tasks)."""
    await asyncio.sleep(max(0.0, min(seconds, 240.0)))
    return f"computed {label} after {seconds:g}s"


@toolpalette.tool(read_only=True, task_support="required")
async def failing_job() -> str:
    """Work for a second, then fail with a tool error."""
    await asyncio.sleep(1.0)
    raise ToolError("The job failed, as it always does.")


@toolpalette.tool(read_only=True, task_support="optional")
async def protocol_error_job() -> str:
    """Work for a second, then crash (the task fails)."""
    await asyncio.sleep(1.0)
    raise RuntimeError("the job crashed")


CONFIRM_FORM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}


@toolpalette.tool(task_support="optional")
async def confirm_delete(filename: str, ctx: ToolContext) -> str:
    """Look the file up, then ask the user to confirm its deletion."""
    await asyncio.sleep(1.0)
    answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_FORM)
    confirmed = answer.accepted and bool((answer.content or {}).get("confirm"))
    return f"{filename} {'deleted' if confirmed else 'kept'}"


@toolpalette.tool(read_only=True, task_support="optional")
async def multi_input(ctx: ToolContext) -> str:
    """Ask two questions at once, then answer with both."""
    await asyncio.sleep(1.0)
    first, second = await asyncio.gather(
        ctx.elicit("Your name?", NAME_FORM), ctx.elicit("Confirm?", CONFIRM_FORM)
    )
    return f"{(first.content or {}).get('name')} {(second.content or {}).get('confirm')}"


@toolpalette.tool(read_only=True, task_support="required")
async def test_tool_with_task(ctx: ToolContext) -> str:
    """Ask the user's name, then work on it for a while (as a task)."""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    await asyncio.sleep(1.0)
    return f"Hello, {(answer.content or {}).get('name')}, from a task!"


TASK_TOOLS = (
    greet,
    slow_compute,
    failing_job,
    protocol_error_job,
    confirm_delete,
    multi_input,
    test_tool_with_task,
)
