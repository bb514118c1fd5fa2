"""Checks of what is published: one tool, and one installed distribution's packs and jars."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from toolpalette._formats.export import FORMATS as _FORMATS
from toolpalette._formats.export import export as _export
from toolpalette._tools.provider import ToolProvider, as_provider
from toolpalette._tools.tool import TOOL_NAME

__all__ = ["FORMATS", "Discovered", "assert_discoverable", "check_tool"]

FORMATS: tuple[str, ...] = tuple(_FORMATS)
"""Every schema format a turn exports (``turn.schemas(fmt)``), to test a tool in each."""


def check_tool(obj: object) -> ToolProvider:
    """Check what every published tool must satisfy; return its provider.

    ``obj`` is an ``@tool`` function or class, or a provider. The checks: the name is
    1-64 letters, digits, ``_`` and ``-``; the description is not blank; the input
    schema (and the output schema, if any) is valid Draft 2020-12 that refers to nothing
    outside itself and is within the validation bounds, the input one an object; the
    tool exports to every format in [`FORMATS`][toolpalette.testing.FORMATS] as plain
    JSON. ``tests/contract`` runs it over every installed tool.

    Raises:
        AssertionError: listing every check the tool fails.
    """
    from toolpalette._schema.checks import check_schema
    from toolpalette.errors import InvalidToolSchemaError

    provider = as_provider(obj)
    failed: list[str] = []
    if not TOOL_NAME.match(provider.name):
        failed.append(f"name {provider.name!r} is not 1-64 letters, digits, '_' and '-'")
    if not provider.description.strip():
        failed.append("the description is blank")
    schemas = [("input", provider.input_schema), ("output", provider.output_schema)]
    for what, schema in schemas:
        if schema is None and what == "output":
            continue
        try:
            check_schema(schema, provider.name, what=what)
        except InvalidToolSchemaError as error:
            failed.extend(error.errors)
    for fmt in _FORMATS:
        try:
            (exported,) = _export([provider], fmt)  # type: ignore[arg-type]
            if json.loads(json.dumps(exported)) != exported:
                failed.append(f"the {fmt} export does not survive a JSON round trip")
        except Exception as error:
            failed.append(f"the {fmt} export failed: {type(error).__name__}: {error}")
    if failed:
        raise AssertionError(f"tool {provider.name!r}: " + "; ".join(failed))
    return provider


@dataclass(frozen=True)
class Discovered:
    """What `assert_discoverable()` found for one installed distribution."""

    distribution: str
    """The distribution's name, as its metadata spells it."""
    packs: tuple[str, ...]
    """The entry point names of its tool packs (``toolpalette.plugins``), sorted."""
    tools: tuple[str, ...]
    """The names of its packs' tools, sorted."""
    bundles: tuple[str, ...]
    """The bundle ids of its skilljars (``toolpalette.skilljars``), sorted."""
    skills: tuple[str, ...]
    """The full ids of its skilljars' skills, sorted."""


def assert_discoverable(dist_name: str) -> Discovered:
    """Check that an installed distribution's packs and skilljars load as a host's would.

    The smoke test of a pack or skilljar project (after ``pip install -e .``): the
    distribution declares at least one ``toolpalette.plugins`` or
    ``toolpalette.skilljars`` entry point; each pack imports and yields its tools, and
    each skilljar opens and yields its skills, all without a problem. Returns what was
    found, for the test to compare with what it expects.

    Raises:
        AssertionError: nothing is declared (naming what is installed), or a problem was
            found (listing each with its reason).
    """
    from toolpalette._hub import ToolHub
    from toolpalette._plugins.discovery import PLUGIN_GROUP, SKILLJAR_GROUP, discover
    from toolpalette._skills import SkillRegistry

    def canonical(name: str | None) -> str:
        return re.sub(r"[-_.]+", "-", name or "").lower()

    wanted = canonical(dist_name)
    packs = [i for i in discover(PLUGIN_GROUP) if canonical(i.distribution) == wanted]
    jars = [i for i in discover(SKILLJAR_GROUP) if canonical(i.distribution) == wanted]
    if not packs and not jars:
        found = sorted(
            {i.distribution or i.name for g in (PLUGIN_GROUP, SKILLJAR_GROUP) for i in discover(g)}
        )
        raise AssertionError(
            f"no installed distribution {dist_name!r} declares a toolpalette.plugins or "
            "toolpalette.skilljars entry point (install it first: pip install -e .); "
            f"installed: {', '.join(found) or 'none'}"
        )
    hub = ToolHub(config={})
    tools = [p.name for info in packs for p in hub.providers_for_pack(info.name)]
    names = {info.name for info in packs}
    problems = [p for p in hub.problems() if p.pack in names]
    registry = SkillRegistry.from_entry_points(jars)
    registry.load_all()
    problems.extend(registry.problems())
    if problems:
        listed = "; ".join(
            f"{p.kind}: {p.pack or '?'} [{p.item or '-'}]: {p.reason}" for p in problems
        )
        raise AssertionError(f"{dist_name!r} loads with {len(problems)} problem(s): {listed}")
    spelled = (packs or jars)[0].distribution or dist_name
    return Discovered(
        distribution=spelled,
        packs=tuple(sorted(names)),
        tools=tuple(sorted(tools)),
        bundles=tuple(sorted(registry.loaded_bundles())),
        skills=tuple(sorted(registry.ids())),
    )
