"""``toolpalette list``: every available tool, with where it comes from."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from toolpalette._plugins.listing import ListedTool, Listing
from toolpalette._plugins.problems import Problem
from toolpalette._tools.info import distribution_label

if TYPE_CHECKING:
    from toolpalette._hub import ToolHub
    from toolpalette._tools.provider import ToolProvider

NO_TOOLS_HINT = (
    "No tools available. Install a tool pack: the first-party ones are in the toolpalette "
    "repository (pip install ./plugins/toolpalette-files from a checkout), or start "
    "your own with: toolpalette new pack NAME"
)
"""What ``list`` says when no pack provides a tool: it names only what exists."""

__all__ = [
    "NO_TOOLS_HINT",
    "add_config_option",
    "given_hub",
    "host_problems",
    "hub_from_args",
    "listing_from_args",
    "problem_entry",
    "problems_note",
    "unknown_tool_notes",
    "register",
    "table",
    "tool_entry",
    "using_hub",
]

_DESCRIPTION_WIDTH = 72

_GIVEN_HUB: ContextVar[ToolHub | None] = ContextVar("toolpalette_cli_hub", default=None)


def register(subparsers: Any) -> None:
    """Add ``list`` to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "list",
        help="list every available tool",
        description="List every tool the installed packs offer.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--content",
        action="store_true",
        help="list the packs' prompts and resources instead (imports every pack)",
    )
    add_config_option(parser)
    parser.set_defaults(func=run)


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """The ``--config PATH`` option every hub-backed command takes."""
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="a toolpalette.toml or pyproject.toml (default: the one in this directory)",
    )


def given_hub() -> ToolHub | None:
    """The hub `using_hub()` gives the commands, or None (they build their own)."""
    return _GIVEN_HUB.get()


def hub_from_args(args: argparse.Namespace) -> ToolHub:
    """The hub a command works on: installed packs, configured as ``--config`` says.

    Inside `using_hub()`, the hub given there instead (``--config`` is then unused).
    """
    given = _GIVEN_HUB.get()
    if given is not None:
        return given
    from toolpalette._hub import ToolHub

    return ToolHub(config=getattr(args, "config", None))


def listing_from_args(args: argparse.Namespace) -> Listing:
    """The listing a command prints: the hub's, without building a hub when none is given.

    A warm listing cache answers before even the pack catalog is built, without
    importing the hub, pydantic or asyncio (see ``toolpalette._plugins.listing``); a
    miss builds the catalog alone; a configuration that names MCP servers needs the
    hub, which takes each server's tools from the listing kept from its last run while
    that is fresh (the server is not started), and lists the others live.
    """
    given = _GIVEN_HUB.get()
    if given is not None:
        return _with_problems(given.listing(), host_problems(given))
    from toolpalette._plugins import listing
    from toolpalette._plugins.config import load_config
    from toolpalette._plugins.switches import Switches

    config = load_config(getattr(args, "config", None))
    if config.mcp_servers or config.mcp_json:  # servers' tools come through a hub
        with hub_from_args(args) as hub:
            return _with_problems(hub.listing(), host_problems(hub))
    switches = Switches.from_environ()
    found = listing.load_installed(switches, listing.settings_of(config))
    if isinstance(found, listing.Miss):
        from toolpalette._plugins.catalog import PackCatalog

        return _with_problems(PackCatalog(config, switches).listing(miss=found), config.problems)
    return _with_problems(found, config.problems)


def host_problems(hub: ToolHub) -> list[Problem]:
    """The configuration's problems and the MCP servers', as far as the hub knows them.

    A server table with neither ``command`` nor ``url`` adjusts a pack's server; whether
    some pack defines it (or the table is a typo, ``comand``) is known only with the
    packs imported, so they are, without starting any server.
    """
    mcp = hub.mcp()
    if mcp.overrides:
        with mcp.at_hand():
            hub.catalog()
    return [p for p in hub.problems() if p.kind in ("config", "server")]


def _with_problems(found: Listing, more: Iterable[Problem]) -> Listing:
    """``found`` with the problems of ``more`` it does not hold yet."""
    problems = list(found.problems)
    for problem in more:
        if problem not in problems:
            problems.append(problem)
    return dataclasses.replace(found, problems=tuple(problems))


def unknown_tool_notes(name: str, known: Iterable[str], problems: Iterable[Problem]) -> list[str]:
    """What the host is told about a tool no one provides: a close name, broken servers.

    Host-facing only (the model's 404 text does not change): a configured MCP server
    that cannot be used may be the one that provides ``name``, so each is named with
    its problem.
    """
    from toolpalette._plugins.config import did_you_mean

    notes = []
    close = did_you_mean(name, known)
    if close:
        notes.append(f"note: no tool is named {name!r}{close}")
    for problem in problems:
        if problem.kind == "server" and (problem.pack or "").startswith("mcp:"):
            server = (problem.pack or "")[len("mcp:") :]
            notes.append(
                f"note: MCP server {server!r} may provide {name!r}, but it cannot be used: "
                f"{problem.reason}"
            )
    return notes


def problems_note(problems: Sequence[Problem]) -> None:
    """The one line on stderr a command prints when problems were found, else nothing."""
    if problems:
        print(f"\n{len(problems)} problem(s) found; run `toolpalette check`.", file=sys.stderr)


@contextlib.contextmanager
def using_hub(hub: ToolHub) -> Iterator[ToolHub]:
    """Make the hub-backed commands run in this context work on ``hub``.

    For running the command line in-process on a hub built in code
    (``toolpalette.testing.run_cli``); the command line itself never calls it.
    """
    token = _GIVEN_HUB.set(hub)
    try:
        yield hub
    finally:
        _GIVEN_HUB.reset(token)


def run(args: argparse.Namespace) -> int:
    """Print the catalog; exit status 0 (problems do not fail a listing)."""
    if getattr(args, "content", False):
        return _run_content(args)
    found = listing_from_args(args)
    providers, problems = found.tools, found.problems
    if args.json:
        listing = {
            "tools": [tool_entry(p) for p in providers],
            "problems": [problem_entry(p) for p in problems],
        }
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    if not providers:
        print(NO_TOOLS_HINT)
    else:
        print(table([_row(p) for p in providers], ("NAME", "MODE", "PACK", "DESCRIPTION")))
    problems_note(problems)
    return 0


def _run_content(args: argparse.Namespace) -> int:
    """``list --content``: every pack's prompts and resources (never cached)."""
    with hub_from_args(args) as hub:
        prompts, resources = hub.prompts(), hub.resources()
        problems = [p for p in hub.problems() if p.kind in ("invalid-content", "garbage")]
    if args.json:
        listing = {
            "prompts": [
                {
                    "name": p.name,
                    "description": p.description,
                    "arguments": [{"name": a.name, "required": a.required} for a in p.arguments],
                    "pack": p.pack,
                    "read_only": p.read_only,
                }
                for p in prompts
            ],
            "resources": [
                {
                    "uri": r.uri,
                    "templated": r.templated,
                    "mime_type": r.mime_type,
                    "pack": r.pack,
                    "read_only": r.read_only,
                }
                for r in resources
            ],
        }
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    if not prompts and not resources:
        print("No prompts or resources: no installed pack ships any.")
        return 0
    rows = [
        (
            "prompt",
            p.name,
            ", ".join(a.name + ("" if a.required else "?") for a in p.arguments),
            p.pack or "",
        )
        for p in prompts
    ]
    rows += [
        ("template" if r.templated else "resource", r.uri, r.mime_type or "", r.pack or "")
        for r in resources
    ]
    print(table(rows, ("KIND", "NAME OR URI", "ARGUMENTS OR TYPE", "PACK")))
    if problems:
        print(f"\n{len(problems)} problem(s) found; run `toolpalette check`.", file=sys.stderr)
    return 0


def tool_entry(tool: ListedTool | ToolProvider) -> dict[str, Any]:
    """One tool in ``list --json``: name, description, read_only, pack, distribution, version.

    An MCP server's tool also has ``server``.
    """
    info = tool if isinstance(tool, ListedTool) else ListedTool.of(tool)
    entry = {
        "name": info.name,
        "description": info.description,
        "read_only": info.read_only,
        "pack": info.pack,
        "distribution": info.distribution,
        "version": info.version,
    }
    if info.server is not None:  # an MCP server's tool
        entry["server"] = info.server
    return entry


def problem_entry(problem: Problem) -> dict[str, Any]:
    """One problem in ``--json`` output: kind, pack, distribution, item, reason, fatal."""
    return {
        "kind": problem.kind,
        "pack": problem.pack,
        "distribution": problem.distribution,
        "item": problem.item,
        "reason": problem.reason,
        "fatal": is_fatal(problem),
    }


def is_fatal(problem: Problem) -> bool:
    """Whether ``check`` fails on it: a pack blocked on purpose is not a failure."""
    return problem.fatal and problem.kind != "blocked"


def _row(tool: ListedTool) -> tuple[str, ...]:
    pack = tool.pack or "(unknown)"
    label = distribution_label(tool.distribution, tool.version)
    if tool.server is not None:
        pack = f"mcp:{tool.server}" + (f" (pack {tool.pack})" if tool.pack else "")
    elif label:
        pack += f" ({label})"
    first_line = (tool.description.strip().splitlines() or [""])[0]
    if len(first_line) > _DESCRIPTION_WIDTH:
        first_line = first_line[: _DESCRIPTION_WIDTH - 3] + "..."
    mode = "read-only" if tool.read_only else "mutating"
    return (tool.name, mode, pack, first_line)


def table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> str:
    """Left-aligned columns, two spaces apart; the last column is not padded."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)
