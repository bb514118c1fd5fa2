"""``toolpalette show NAME``: one tool in full, or a pack's prompt, resource or template."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolpalette._cli.cached import Answer
from toolpalette._cli.list import (
    add_config_option,
    host_problems,
    hub_from_args,
    problems_note,
    tool_entry,
    unknown_tool_notes,
)
from toolpalette._tools.info import distribution_label
from toolpalette.errors import ToolNotFoundError

if TYPE_CHECKING:
    from toolpalette._hub import ToolHub
    from toolpalette._tools.provider import ToolProvider

__all__ = ["register", "show_entry"]


def register(subparsers: Any) -> None:
    """Add ``show`` to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "show",
        help="print one tool with its schemas, or a prompt or resource",
        description="Print one tool: description, flags, origin, input and output schema. "
        "A NAME no tool has is looked up among the packs' prompts (arguments, completions), "
        "then their resources and templates by URI (a URI a template matches shows the "
        "template). Exit status 1 when nothing has that name; the message lists near names.",
    )
    parser.add_argument(
        "name", metavar="NAME", help="a tool's or prompt's name, or a resource's URI"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_config_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the tool, prompt or resource; exit status 1 when nothing has that name."""
    cache = Answer.about_packs(args, "show")
    cached = _entries(cache.read())
    try:
        if cached is not None:
            problems = list(cache.problems)
            entry = _lookup(cached, args.name)
        else:
            with hub_from_args(args) as hub:
                if cache.usable:
                    _remember(hub, cache)
                problems = host_problems(hub)
                entries = content_entries(hub)
                registry = hub.catalog()
                if args.name in registry.tool_names() or not entries:
                    provider = registry.get_provider(args.name)
                    entry = show_entry(provider, hub.linked_skills(provider))
                else:
                    texts = {k: json.dumps(v, ensure_ascii=False) for k, v in entries.items()}
                    texts.update((n, "") for n in registry.tool_names())
                    entry = _lookup(texts, args.name)
    except ToolNotFoundError as exc:
        print(f"toolpalette show: {_not_found_text(args.name, exc)}", file=sys.stderr)
        for note in unknown_tool_notes(args.name, exc.available, problems):
            print(note, file=sys.stderr)
        if isinstance(exc, _NotFound):
            print(_near_note(args.name, exc.content), file=sys.stderr)
        problems_note(problems)
        return 1
    if args.json:
        print(json.dumps(entry, indent=2, ensure_ascii=False))
    else:
        print(_text(entry))
    problems_note(problems)
    return 0


class _NotFound(ToolNotFoundError):
    """No tool, prompt or resource has the name; ``content`` keys what packs ship."""

    def __init__(self, name: str, available: list[str], content: list[str]) -> None:
        super().__init__(tool_name=name, available=available)
        self.content = content


def _not_found_text(name: str, exc: ToolNotFoundError) -> str:
    if not isinstance(exc, _NotFound):
        return str(exc)
    tools = ", ".join(exc.available) or "none"
    return (
        f"{name!r} is not available: no tool, prompt or resource has that name or URI. "
        f"Available tools: {tools}."
    )


def _lookup(texts: dict[str, str], name: str) -> dict[str, Any]:
    """The entry of ``name``: a tool's, a prompt's, then a resource's or its template's.

    Raises:
        ToolNotFoundError: nothing has that name (with what the packs ship, if any).
    """
    for key in (name, PROMPT + name, RESOURCE + name):
        if texts.get(key):
            found: dict[str, Any] = json.loads(texts[key])
            return found
    for key, text in texts.items():
        if key.startswith(RESOURCE) and "{" in key:
            values = _template_match(key[len(RESOURCE) :], name)
            if values is not None:
                found = json.loads(text)
                found["matched"] = {"uri": name, "parameters": values}
                return found
    tools = sorted(k for k in texts if ":" not in k)
    content = sorted(k for k in texts if k.startswith((PROMPT, RESOURCE)))
    if not content:
        raise ToolNotFoundError(tool_name=name, available=tools)
    raise _NotFound(name, tools, content)


def _template_match(template: str, uri: str) -> dict[str, str] | None:
    """The parameters ``uri`` gives ``template`` (as `@resource` matches), or None."""
    import re
    from urllib.parse import unquote

    pieces = re.split(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", template)
    pattern = "".join(
        re.escape(p) if i % 2 == 0 else f"(?P<{p}>[^/]+)" for i, p in enumerate(pieces)
    )
    found = re.fullmatch(pattern, uri)
    return None if found is None else {k: unquote(v) for k, v in found.groupdict().items()}


def _near_note(name: str, content: list[str]) -> str:
    """The note naming the prompts and resources closest to ``name`` (or all, if few)."""
    import difflib

    names = {key.split(":", 1)[1]: key.split(":", 1)[0] for key in content}
    names = {n: "template" if "{" in n and k + ":" == RESOURCE else k for n, k in names.items()}
    near = difflib.get_close_matches(name, sorted(names), n=5, cutoff=0.5)
    if not near and len(names) <= 5:
        near = sorted(names)
    if not near:
        return "note: `toolpalette list --content` lists the prompts and resources"
    return "note: near names: " + ", ".join(f"{n!r} ({names[n]})" for n in near)


def _remember(hub: ToolHub, cache: Answer) -> None:
    """Store every tool's entry, when the catalog is the packs' alone and each one builds.

    A catalog holding an MCP server's tools (a pack's server) is not stored here (the
    server's own listing is kept apart, see ``toolpalette._mcp_client.cached``); a tool
    whose entry cannot be built leaves the cache as it was, so that ``show`` of it fails
    as it does without the cache.
    """
    registry = hub.catalog()
    if hub.mcp_server_names():  # the packs' servers are known once the catalog is built
        return
    try:
        entries = {
            name: json.dumps(_entry_of(hub, registry.get_provider(name)), ensure_ascii=False)
            for name in registry.tool_names()
        }
    except Exception:  # a property that raises, a schema that is not JSON: left uncached
        return
    try:
        content = content_entries(hub)
    except Exception:
        return
    entries.update((k, json.dumps(v, ensure_ascii=False)) for k, v in content.items())
    cache.write(entries)


PROMPT = "prompt:"
"""The cache key of a prompt's entry is this and its name (no tool name has a colon)."""
RESOURCE = "resource:"
"""The cache key of a resource's or template's entry is this and its URI."""


def content_entries(hub: ToolHub) -> dict[str, dict[str, Any]]:
    """``show --json`` of every prompt and resource the packs ship, by cache key."""
    versions = {p.name: p.version for p in hub.plugins()}
    entries: dict[str, dict[str, Any]] = {}
    for prompt in hub.prompts():
        entries[PROMPT + prompt.name] = {
            "kind": "prompt",
            "name": prompt.name,
            "title": prompt.title,
            "description": prompt.description,
            "arguments": [
                {"name": a.name, "description": a.description, "required": a.required}
                for a in prompt.arguments
            ],
            "completions": _completions(prompt.completions),
            "asks_the_client": prompt.context_param is not None,
            "read_only": prompt.read_only,
            **_origin(prompt.pack, prompt.distribution, versions),
        }
    for resource in hub.resources():
        entries[RESOURCE + resource.uri] = {
            "kind": "template" if resource.templated else "resource",
            "uri": resource.uri,
            "name": resource.name,
            "title": resource.title,
            "description": resource.description,
            "mime_type": resource.mime_type,
            "parameters": list(resource.params),
            "completions": _completions(resource.completions),
            "read_only": resource.read_only,
            **_origin(resource.pack, resource.distribution, versions),
        }
    return entries


def _completions(completers: Any) -> dict[str, list[str] | str]:
    """Each argument's completion values, or ``"computed"`` for a function of the prefix."""
    return {
        name: "computed" if callable(values) else [str(v) for v in values]
        for name, values in completers.items()
    }


def _origin(pack: str | None, dist: str | None, versions: dict[str, str | None]) -> dict[str, Any]:
    return {"pack": pack, "distribution": dist, "version": versions.get(pack or "")}


def _entries(cached: Any) -> dict[str, str] | None:
    """The cached entries (each one's JSON text) by tool name, or None for another shape.

    Each entry is kept as text and parsed alone: reading the file then costs scanning
    strings, not building every tool's schema, whatever the number of tools.
    """
    if isinstance(cached, dict) and all(isinstance(e, str) for e in cached.values()):
        return cached
    return None


def _entry_of(hub: ToolHub, provider: ToolProvider) -> dict[str, Any]:
    return show_entry(provider, hub.linked_skills(provider))


def show_entry(provider: ToolProvider, skills: Sequence[str] = ()) -> dict[str, Any]:
    """``show --json``: the ``list`` keys, display data, module, schemas, linked skills."""
    origin, info = provider.origin, provider.info
    return {
        **tool_entry(provider),
        "display_name": info.display_name,
        "action_verb": info.action_verb,
        "weight": info.weight,
        "module": origin.module if origin else None,
        "input_schema": info.input_schema,
        "output_schema": info.output_schema,
        "skills": list(skills),
    }


def _text(entry: dict[str, Any]) -> str:
    if entry.get("kind") == "prompt":
        return _prompt_text(entry)
    if entry.get("kind") in ("resource", "template"):
        return _resource_text(entry)
    mode = "read-only" if entry["read_only"] else "mutating"
    where = entry["pack"] or "(unknown pack)"
    label = distribution_label(entry["distribution"], entry["version"])
    if entry.get("server") is not None:
        where = f"MCP server {entry['server']}" + (
            f" of pack {entry['pack']}" if entry["pack"] else ""
        )
    elif label:
        where += f" from {label}"
    lines = [
        f"{entry['name']} ({mode}) - {entry['display_name']}",
        f"pack: {where}; module: {entry['module'] or '?'}",
        "",
        entry["description"],
        "",
        "input schema:",
        json.dumps(entry["input_schema"], indent=2, ensure_ascii=False),
    ]
    if entry["output_schema"] is not None:
        lines += ["", "output schema:", json.dumps(entry["output_schema"], indent=2)]
    if entry.get("skills"):
        lines += ["", f"skills: {', '.join(entry['skills'])}"]
    return "\n".join(lines)


def _where(entry: dict[str, Any]) -> str:
    label = distribution_label(entry["distribution"], entry["version"])
    where = entry["pack"] or "(unknown pack)"
    return f"pack: {where} from {label}" if label else f"pack: {where}"


def _completion_text(values: list[str] | str | None) -> str:
    if values is None:
        return ""
    if values == "computed":
        return " [completions: computed from what is typed]"
    return " [completions: " + ", ".join(values) + "]"


def _prompt_text(entry: dict[str, Any]) -> str:
    mode = "read-only" if entry["read_only"] else "mutating"
    title = f" - {entry['title']}" if entry["title"] else ""
    lines = [f"{entry['name']} (prompt, {mode}){title}", _where(entry)]
    if entry["description"]:
        lines += ["", entry["description"]]
    lines += ["", "arguments:" if entry["arguments"] else "arguments: none"]
    for argument in entry["arguments"]:
        required = " (required)" if argument["required"] else ""
        about = f": {argument['description']}" if argument["description"] else ""
        more = _completion_text(entry["completions"].get(argument["name"]))
        lines.append(f"  {argument['name']}{required}{about}{more}")
    if entry["asks_the_client"]:
        lines += ["", "may ask the client's user while it renders (elicitation)"]
    return "\n".join(lines)


def _resource_text(entry: dict[str, Any]) -> str:
    mode = "read-only" if entry["read_only"] else "mutating"
    title = f" - {entry['title']}" if entry["title"] else ""
    mime = entry["mime_type"] or "by what it returns (text, bytes or JSON)"
    lines = [
        f"{entry['uri']} ({entry['kind']}, {mode}) - {entry['name']}{title}",
        _where(entry),
        f"mime type: {mime}",
    ]
    matched = entry.get("matched")
    if matched:
        values = ", ".join(f"{k}={v!r}" for k, v in matched["parameters"].items())
        lines.append(f"matches {matched['uri']} with {values}")
    if entry["description"]:
        lines += ["", entry["description"]]
    if entry["parameters"]:
        lines += ["", "parameters:"]
        for name in entry["parameters"]:
            lines.append(f"  {name}{_completion_text(entry['completions'].get(name))}")
    return "\n".join(lines)
