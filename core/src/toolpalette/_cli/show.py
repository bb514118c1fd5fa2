"""``toolpalette show NAME``: one tool in full, schemas included.

Exit status 1 when no available tool has that name (the message lists the names).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolpalette._cli.list import add_config_option, hub_from_args, tool_entry
from toolpalette._tools.origin import distribution_label
from toolpalette._tools.provider import ToolProvider
from toolpalette.errors import ToolNotFoundError

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
    with hub_from_args(args) as hub:
        try:
            provider = hub.catalog().get_provider(args.name)
        except ToolNotFoundError as exc:
            print(f"toolpalette show: {exc}", file=sys.stderr)
            return 1
        entry = show_entry(provider)
    if args.json:
        print(json.dumps(entry, indent=2, ensure_ascii=False))
        return 0
    print(_text(entry))
    return 0


def show_entry(provider: ToolProvider) -> dict[str, Any]:
    """``show --json``: the ``list`` keys plus display data, module and both schemas."""
    origin = provider.origin
    return {
        **tool_entry(provider),
        "display_name": provider.display_name,
        "action_verb": provider.action_verb,
        "weight": provider.weight,
        "module": origin.module if origin else None,
        "input_schema": provider.input_schema,
        "output_schema": provider.output_schema,
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
    return "\n".join(lines)
