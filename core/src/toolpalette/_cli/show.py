"""``toolpalette show NAME``: one tool in full, schemas included."""

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
from toolpalette._tools.origin import distribution_label
from toolpalette.errors import ToolNotFoundError

if TYPE_CHECKING:
    from toolpalette._hub import ToolHub
    from toolpalette._tools.provider import ToolProvider

__all__ = ["register", "show_entry"]


def register(subparsers: Any) -> None:
    """Add ``show`` to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "show",
        help="print one tool with its schemas",
        description="Print one tool: description, flags, origin, input and output schema.",
    )
    parser.add_argument("name", metavar="NAME", help="the tool's name")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_config_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the tool; exit status 1 when it is not available."""
    cache = Answer.about_packs(args, "show")
    cached = _entries(cache.read())
    try:
        if cached is not None:
            problems = list(cache.problems)
            text = cached.get(args.name)
            if text is None:
                raise ToolNotFoundError(tool_name=args.name, available=sorted(cached))
            entry = json.loads(text)
        else:
            with hub_from_args(args) as hub:
                if cache.usable:
                    _remember(hub, cache)
                registry = hub.catalog()
                problems = host_problems(hub)
                provider = registry.get_provider(args.name)
                entry = show_entry(provider, hub.linked_skills(provider))
    except ToolNotFoundError as exc:
        print(f"toolpalette show: {exc}", file=sys.stderr)
        for note in unknown_tool_notes(args.name, exc.available, problems):
            print(note, file=sys.stderr)
        problems_note(problems)
        return 1
    if args.json:
        print(json.dumps(entry, indent=2, ensure_ascii=False))
    else:
        print(_text(entry))
    problems_note(problems)
    return 0


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
    cache.write(entries)


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
