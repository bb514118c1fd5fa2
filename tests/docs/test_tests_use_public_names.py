"""Tests reach toolpalette through its public names; the few that cannot say why, here.

The public modules are ``toolpalette``, ``toolpalette.errors``, ``toolpalette.hookspecs``
and ``toolpalette.testing``, which also offers what tests need from inside (a worker
pool or report queue of their own, ``as_provider``, ``run_cli``, ``wait_until``...).
A test file that reaches a private module (an import of ``toolpalette._...``, or the
name in a string, as ``monkeypatch.setattr`` and ``importlib.resources`` take it) must
be listed in ``INTERNAL`` with the modules it reaches and why: a unit test of an
internal module, or a seam no public name offers yet. docs/architecture.md
("Tests and internals") states the rule.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
PRIVATE = re.compile(r"^toolpalette\._[A-Za-z0-9_.]*$")

INTERNAL: dict[str, tuple[tuple[str, ...], str]] = {
    "tests/core/tools/test_changes.py": (
        ("toolpalette._tools.changes",),
        "unit test of how resource_updated reaches its listeners (servers are its public ear)",
    ),
    "tests/core/agents/test_meta_reading.py": (
        ("toolpalette._agents.meta",),
        "builds read_skill_file's provider to test its path check past schema validation",
    ),
    "tests/core/search/test_ranking.py": (
        ("toolpalette._search.ranking",),
        "unit tests of the ranker; the public face is the search_tools meta-tool (next)",
    ),
    "tests/core/cli/test_cli_call_host.py": (
        ("toolpalette._cli.call",),
        "unit test of the file names `call --save` gives content blocks",
    ),
    "tests/core/cli/test_cli_cache.py": (
        ("toolpalette._hub",),
        "checks by name that a warm read-only command never imports the hub's module",
    ),
    "tests/core/cli/test_cli_serve_socket.py": (
        ("toolpalette._cli.serve",),
        "unit test of the socket `serve --http` listens on: its connections get TCP_NODELAY",
    ),
    "tests/core/skills/test_skills_of_distributions.py": (
        ("toolpalette._skills.registry",),
        "unit test of how serve --select finds a distribution's skills without opening others",
    ),
    "tests/core/plugins/test_collect.py": (
        (
            "toolpalette._plugins.collect",
            "toolpalette._plugins.manager",
            "toolpalette._plugins.problems",
        ),
        "unit tests of the typed boundary around hook calls and of describing failures",
    ),
    "tests/core/plugins/test_config.py": (
        ("toolpalette._plugins.config",),
        "unit tests of reading the host's configuration and of renamed providers",
    ),
    "tests/core/plugins/test_listing.py": (
        ("toolpalette._hub",),
        "checks by name that a warm `toolpalette list` never imports the hub's module",
    ),
    "tests/core/plugins/test_manager.py": (
        ("toolpalette._plugins.manager",),
        "unit tests of the plugin manager",
    ),
    "tests/core/plugins/test_plain_pins.py": (
        ("toolpalette._plugins.discovery",),
        "differential test of the plain pin check against packaging (no public name)",
    ),
    "tests/core/plugins/test_packs.py": (
        (
            "toolpalette._plugins.discovery",
            "toolpalette._plugins.installed",
            "toolpalette._plugins.packs",
        ),
        "unit tests of the pack scan, on entry points and metadata folders built in the test",
    ),
    "tests/core/skills/conftest.py": (
        ("toolpalette._plugins.discovery",),
        "builds skilljar entry points for SkillRegistry.from_entry_points",
    ),
    "tests/core/skills/test_lazy_imports.py": (
        ("toolpalette._skills", "toolpalette._skills.manifest"),
        "checks by name that the skills API imports the manifest's model only to build a skill",
    ),
    "tests/core/skills/test_loader.py": (
        ("toolpalette._skills.loader",),
        "unit tests of the SKILL.md reader",
    ),
    "tests/core/skills/test_manifest.py": (
        ("toolpalette._skills.jar", "toolpalette._skills.manifest"),
        "unit tests of the front-matter rules and of bundle ids",
    ),
    "tests/core/skills/test_manifest_schema.py": (
        ("toolpalette._skills",),
        "reads the shipped schema file, documented in the skilljar guide",
    ),
    "tests/core/skills/test_registry.py": (
        ("toolpalette._plugins.discovery",),
        "builds skilljar entry points for SkillRegistry.from_entry_points",
    ),
    "tests/core/test_hub.py": (
        (
            "toolpalette._plugins.catalog",
            "toolpalette._plugins.discovery",
            "toolpalette._plugins.packs",
        ),
        "stands in installed packs for the pack catalog's scan, to test what gets imported",
    ),
    "tests/core/schema/test_strict.py": (
        ("toolpalette._formats.export", "toolpalette._schema.strict"),
        "unit tests of the strict subsets and their normalization",
    ),
    "tests/mcp/client/test_inputs.py": (
        ("toolpalette._mcp_client.inputs",),
        "unit test of how a task's input requests are put to a channel (no public name)",
    ),
    "tests/mcp/client/test_quick_check.py": (
        ("toolpalette._schema.quick_check",),
        "differential test of MCP tools' quick input check against the bounded validator",
    ),
    "tests/mcp/server/test_serve_start_imports.py": (
        ("toolpalette._skills.manifest",),
        "checks by name that serve's first answers never import the manifest's module",
    ),
    "tests/integration/test_cli_dists.py": (
        ("toolpalette._hub",),
        "checks by name that a warm read-only command never imports the hub's module",
    ),
    "tests/integration/test_skilljars.py": (
        ("toolpalette._plugins.discovery",),
        "builds the registry of installed skilljars alone, without the packs' skills",
    ),
    "tests/core/run/test_reports.py": (
        ("toolpalette._run.reports",),
        "sets the report queue's stall limit",
    ),
    "tests/core/run/test_workers.py": (
        ("toolpalette._run.workers",),
        "unit tests of the worker pool",
    ),
    "tests/core/formats/test_export.py": (
        ("toolpalette._formats.export",),
        "unit tests of the schema export and the strict-mode check",
    ),
    "tests/core/schema/test_strict_json.py": (
        ("toolpalette._schema.strict_json",),
        "unit tests of the strict JSON loader and its limits",
    ),
    "tests/core/schema/test_metaschema.py": (
        ("toolpalette._schema.metaschema", "toolpalette._schema.checks"),
        "differential tests of the fast metaschema walk against jsonschema, and check_schema "
        "with the walk switched off (its outcome before the walk)",
    ),
    "tests/core/schema/test_checks.py": (
        (
            "toolpalette._schema.bounded",
            "toolpalette._schema.budget",
            "toolpalette._schema.checks",
            "toolpalette._schema.paths",
            "toolpalette._tools.signature",
        ),
        "unit tests of the schema helpers providers are built with",
    ),
    "tests/core/tools/test_tool.py": (
        ("toolpalette._tools.tool",),
        "unit tests of get_spec, how the registry reads what @tool recorded",
    ),
}
"""Test file -> (the private modules it may reach, why)."""


def _module_of(module: str, name: str) -> str:
    """``from module import name``: the submodule if ``name`` is one, else ``module``."""
    candidate = f"{module}.{name}"
    try:
        return candidate if importlib.util.find_spec(candidate) is not None else module
    except (ImportError, ValueError):
        return module


def private_references(path: Path) -> set[str]:
    """Every private toolpalette module the file imports or names in a string."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if PRIVATE.match(a.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "toolpalette":
                found.update(f"toolpalette.{a.name}" for a in node.names if a.name[0] == "_")
            elif PRIVATE.match(node.module):
                found.update(_module_of(node.module, a.name) for a in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and PRIVATE.match(node.value)
        ):
            found.add(node.value)
    return found


def _allowed(reference: str, modules: tuple[str, ...]) -> bool:
    return any(reference == m or reference.startswith(f"{m}.") for m in modules)


def _all_references() -> dict[str, set[str]]:
    files = sorted(p for p in TESTS.rglob("*.py") if p != Path(__file__).resolve())
    found = {p.relative_to(ROOT).as_posix(): private_references(p) for p in files}
    return {path: refs for path, refs in found.items() if refs}


def test_tests_use_public_names_or_say_why() -> None:
    unexplained = {
        path: sorted(r for r in refs if not _allowed(r, INTERNAL.get(path, ((), ""))[0]))
        for path, refs in _all_references().items()
    }
    unexplained = {path: refs for path, refs in unexplained.items() if refs}
    assert unexplained == {}, (
        "use the public name (toolpalette, toolpalette.errors, toolpalette.hookspecs, "
        "toolpalette.testing), or list the file in INTERNAL with the reason: "
        f"{unexplained}"
    )


def test_every_listed_exception_is_still_needed() -> None:
    found = _all_references()
    stale = {
        path: [m for m in modules if not any(_allowed(r, (m,)) for r in found.get(path, ()))]
        for path, (modules, _) in INTERNAL.items()
    }
    assert {path: modules for path, modules in stale.items() if modules} == {}


def test_the_checker_sees_each_kind_of_reference(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "import toolpalette._hub as hub\n"
        "from toolpalette._run import workers\n"
        "from toolpalette._tools.tool import get_spec\n"
        "from toolpalette import _version\n"
        "from toolpalette import Executor\n"
        "from toolpalette.testing import run_cli\n"
        "def test(monkeypatch):\n"
        "    monkeypatch.setattr('toolpalette._hub.discover', None)\n",
        encoding="utf-8",
    )
    assert private_references(sample) == {
        "toolpalette._hub",
        "toolpalette._run.workers",
        "toolpalette._tools.tool",
        "toolpalette._version",
        "toolpalette._hub.discover",
    }
