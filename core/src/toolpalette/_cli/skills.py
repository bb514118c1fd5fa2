"""``toolpalette skills``: list the installed bundles and skills, or print one skill."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from toolpalette._cli.cached import Answer
from toolpalette._tools.info import distribution_label
from toolpalette.errors import SkillNotFoundError

if TYPE_CHECKING:
    from toolpalette._plugins.problems import Problem
    from toolpalette._skills import Skill, SkillRegistry

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``skills`` (and ``skills show``) to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "skills",
        help="list installed skilljars and their skills",
        description="List installed skilljars and skills, or print one skill.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run_list)
    actions = parser.add_subparsers(dest="skills_command", metavar="ACTION")
    show = actions.add_parser("show", help="print one skill", description="Print one skill.")
    show.add_argument("id", metavar="ID", help="the full skill id, <bundle-id>/<name>")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(func=run_show)


def _registry(args: argparse.Namespace) -> SkillRegistry:
    from toolpalette._cli.list import hub_from_args

    return hub_from_args(args).skills()


def run_list(args: argparse.Namespace) -> int:
    """List every bundle and skill, with problems; exit status 0."""
    cache = Answer.about_skilljars(args, "skills")
    listing = _listing(cache.read())
    if listing is None:
        listing = listing_of(_registry(args))
        cache.write(listing)
    if args.json:
        print(json.dumps(listing, indent=2, ensure_ascii=False))
    else:
        print(_listing_text(listing))
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print one skill; exit status 1 when there is no such skill."""
    registry = _registry(args)
    try:
        skill = registry.skill(args.id)
        body = skill.body()
    except SkillNotFoundError as exc:
        print(f"toolpalette skills show: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"toolpalette skills show: cannot read {args.id!r}: {exc}", file=sys.stderr)
        return 1
    entry = _skill_entry(skill, registry.problems())
    if args.json:
        print(json.dumps({**entry, "resources": skill.resources(), "body": body}, indent=2))
    else:
        print(_show_text(skill, entry, body))
    return 0


def _listing(cached: Any) -> dict[str, Any] | None:
    """The cached ``skills --json`` document, or None when it is not of that shape."""
    if isinstance(cached, dict) and set(cached) == {"bundles", "problems"}:
        return cached
    return None


def listing_of(registry: SkillRegistry) -> dict[str, Any]:
    """The JSON form of ``toolpalette skills --json``: bundles with skills, and problems."""
    skills = registry.skills()
    problems = registry.problems()
    bundles = []
    for bundle in registry.bundles():
        members = [s for s in skills if s.bundle == bundle]
        origin = registry.bundle_origin(bundle) or (members[0].origin if members else None)
        server = origin.pack if origin and (origin.pack or "").startswith("mcp:") else None
        bundles.append(
            {
                "id": bundle,
                "distribution": origin.distribution if origin else None,
                "version": origin.version if origin else None,
                "server": server[len("mcp:") :] if server else None,
                "skills": [_skill_entry(skill, problems) for skill in members],
            }
        )
    return {"bundles": bundles, "problems": [_problem_entry(p) for p in problems]}


def _skill_entry(skill: Skill, problems: list[Problem]) -> dict[str, Any]:
    return {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "license": skill.license,
        "compatibility": skill.compatibility,
        "allowed_tools": list(skill.allowed_tools),
        "metadata": dict(skill.metadata),
        "distribution": skill.distribution,
        "version": skill.version,
        "problems": [p.reason for p in problems if p.item == skill.id],
    }


def _problem_entry(problem: Problem) -> dict[str, Any]:
    return {
        "kind": problem.kind,
        "bundle": problem.pack,
        "distribution": problem.distribution,
        "item": problem.item,
        "reason": problem.reason,
    }


def _listing_text(listing: dict[str, Any]) -> str:
    lines: list[str] = []
    for bundle in listing["bundles"]:
        where = distribution_label(bundle["distribution"], bundle["version"]) or ""
        if bundle.get("server"):
            where = f"MCP server {bundle['server']} (Skills extension)"
        lines.append(f"{bundle['id']}  {where}".rstrip())
        for skill in bundle["skills"]:
            lines.append(f"  {skill['id']}")
            lines.append(f"      {_first_line(skill['description'])}")
            lines.extend(f"      warning: {reason}" for reason in skill["problems"])
    if not listing["bundles"]:
        lines.append("No skilljars are installed.")
    others = [p for p in listing["problems"] if p["kind"] != "skill-warning"]
    if others:
        lines.append("")
        lines.append("Problems:")
        lines.extend(f"  {p['kind']}: {p['item'] or p['bundle']}: {p['reason']}" for p in others)
    return "\n".join(lines)


def _first_line(text: str, width: int = 96) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 3] + "..."


def _show_text(skill: Skill, entry: dict[str, Any], body: str) -> str:
    origin = skill.origin
    if origin.distribution:
        where = f"from {origin.distribution} {origin.version or ''}".rstrip()
    else:
        where = f"from {origin.pack or origin.module or 'code'}"
    head = [f"{skill.id}  {where}", "", skill.description, ""]
    for key in ("license", "compatibility"):
        if entry[key]:
            head.append(f"{key}: {entry[key]}")
    if skill.allowed_tools:
        head.append(f"allowed-tools: {' '.join(skill.allowed_tools)}")
    head.extend(f"warning: {reason}" for reason in entry["problems"])
    resources = skill.resources()
    if resources:
        head.append("resources: " + ", ".join(resources))
    return "\n".join([*head, "", body])
