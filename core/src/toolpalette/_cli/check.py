"""``toolpalette check``: the doctor. Loads every pack and skilljar and reports every problem."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from toolpalette._agents import links
from toolpalette._cli.list import add_config_option, hub_from_args, is_fatal, problem_entry
from toolpalette._plugins.problems import Problem
from toolpalette._search import findable

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``check`` to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="report every problem with installed packs (exit 1 if any)",
        description="Load every installed pack and report every problem found.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--findable",
        action="store_true",
        help="also report the tools that queries made from their own description or "
        "parameters do not rank in the top 5 of search_tools",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="for a problem raised by a pack's code, show the message and where it was raised",
    )
    add_config_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Report; exit status 1 when a fatal problem was found, else 0."""
    with hub_from_args(args) as hub, hub.mcp().live():  # every MCP server started, then stopped
        providers = hub.catalog().providers()
        tools = len(providers)
        registry = hub.skills()
        registry.load_all()
        jars, skills = registry.loaded_bundles(), len(registry.ids())
        prompts, resources = len(hub.prompts()), len(hub.resources())
        problems = [*hub.problems(), *_links(hub, providers, registry)]
        unfound = findable.unfound(providers) if args.findable else None
    fatal = sum(1 for p in problems if is_fatal(p))
    if args.json:
        out = {
            "ok": fatal == 0,
            "packs_loaded": hub.loaded_packs(),
            "tools": tools,
            "skilljars_loaded": jars,
            "skills": skills,
            "prompts": prompts,
            "resources": resources,
            "problems": [_entry(p, verbose=args.verbose) for p in problems],
        }
        if unfound is not None:
            out["findable"] = [dataclasses.asdict(u) for u in unfound]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        summary = (
            f"{len(hub.loaded_packs())} pack(s) loaded, {tools} tool(s) available, "
            f"{len(jars)} skilljar(s) loaded, {skills} skill(s) available"
        )
        if prompts or resources:
            summary += f", {prompts} prompt(s) and {resources} resource(s)"
        print(_text(summary, problems, fatal, verbose=args.verbose))
        if unfound is not None:
            print(_findable(unfound, tools))
    return 1 if fatal else 0


def _links(hub: Any, providers: list[Any], registry: Any) -> list[Problem]:
    """Tools' links to skills not installed (notes), skills whose requirements are not.

    The second are fatal: no thinker offers such a skill.
    """
    installed = set(registry.ids())
    found = links.link_problems(providers, installed, hub.linked_skills)
    found += links.requirement_problems(registry.skills(), providers)
    return found


def _findable(unfound: list[Any], tools: int) -> str:
    missed = sorted({u.tool for u in unfound})
    if not missed:
        return f"\nfindable: every one of {tools} tool(s) ranks in the top 5 of its own queries."
    lines = [
        "",
        f"findable: {len(missed)} of {tools} tool(s) are not in the top 5 of one of their "
        "own queries:",
    ]
    for u in unfound:
        rank = f"rank {u.rank}" if u.rank is not None else "not in the first 9"
        lines.append(f"  {u.tool} ({u.source}, {rank}): {u.query!r}")
        lines.append(f"    outranked by: {', '.join(u.outranked_by)}")
    return "\n".join(lines)


def _entry(problem: Problem, *, verbose: bool) -> dict[str, Any]:
    entry = problem_entry(problem)
    if verbose:
        entry["detail"] = problem.detail
    return entry


def _text(summary: str, problems: list[Problem], fatal: int, *, verbose: bool = False) -> str:
    if not problems:
        return f"OK: {summary}, no problems."
    lines = [f"{summary}; {len(problems)} problem(s), {fatal} fatal:", ""]
    for problem in problems:
        where = problem.pack or "?"
        if problem.distribution:
            where += f" ({problem.distribution})"
        item = f" [{problem.item}]" if problem.item else ""
        marker = "error" if is_fatal(problem) else "note"
        lines.append(f"{marker}: {problem.kind}: {where}{item}")
        lines.append(f"    {problem.reason}")
        if verbose and problem.detail:
            lines.extend(f"      {line}" for line in problem.detail.splitlines())
    return "\n".join(lines)
