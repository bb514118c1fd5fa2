"""Tools that talk to their caller through ``ToolContext``: log, elicit, sample, roots.

Imported by the tests in-process, and by ``toolpalette serve --thinker
talking_fixture:Talking`` in a subprocess (with this folder on ``PYTHONPATH``).
"""

from __future__ import annotations

import toolpalette
from toolpalette import ClientRequestError, Thinker, ToolContext, ToolSelector

NAME_FORM = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Your name"}},
    "required": ["name"],
}


@toolpalette.tool(read_only=True)
def log_steps(steps: int, ctx: ToolContext) -> str:
    """Log one line per step (a sync tool: from its worker thread), then finish."""
    for step in range(steps):
        ctx.log("info", f"step {step + 1} of {steps}", {"step": step + 1})
    ctx.log("debug", "all steps done")
    return f"{steps} steps"


@toolpalette.tool(read_only=True)
async def greet(ctx: ToolContext) -> str:
    """Ask the user's name, and greet them."""
    try:
        answer = await ctx.elicit("What is your name?", NAME_FORM)
    except ClientRequestError as exc:
        return f"no way to ask: {exc.reason}"
    if not answer.accepted or answer.content is None:
        return f"the user chose {answer.action}"
    return f"hello {answer.content['name']}"


@toolpalette.tool(read_only=True)
async def summarize(text: str, ctx: ToolContext) -> str:
    """Ask the caller's model to summarize a text."""
    try:
        sampled = await ctx.sample(f"Summarize: {text}", max_tokens=50)
    except ClientRequestError as exc:
        return f"no way to sample: {exc.reason}"
    return f"{sampled.model}: {sampled.text}"


@toolpalette.tool(read_only=True)
async def show_roots(ctx: ToolContext) -> str:
    """List the caller's roots."""
    try:
        roots = await ctx.roots()
    except ClientRequestError as exc:
        return f"no roots: {exc.reason}"
    return ", ".join(f"{r.name}={r.uri}" for r in roots)


@toolpalette.tool(read_only=True)
async def interview(ctx: ToolContext) -> str:
    """Ask two questions, then have the answers summarized: three round trips."""
    first = await ctx.elicit("First name?", NAME_FORM)
    second = await ctx.elicit("Last name?", NAME_FORM)
    names = [a.content["name"] for a in (first, second) if a.content is not None]
    sampled = await ctx.sample(" ".join(names), max_tokens=10)
    return f"{' '.join(names)} / {sampled.text}"


@toolpalette.tool(read_only=True)
async def all_at_once(ctx: ToolContext) -> str:
    """Ask three things together: a 2026-era client gets them in one round."""
    import asyncio

    name, sampled, roots = await asyncio.gather(
        ctx.elicit("Name?", NAME_FORM, key="name"),
        ctx.sample("Say hi", max_tokens=5, key="hi"),
        ctx.roots(key="where"),
    )
    content = name.content or {}
    return f"{content.get('name')} / {sampled.text} / {roots[0].uri}"


TOOLS = (log_steps, greet, summarize, show_roots, interview, all_at_once)


class Talking(Thinker):
    """A thinker offering the talking tools."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector()
        for tool in TOOLS:
            selector.tool(tool)
        return selector
