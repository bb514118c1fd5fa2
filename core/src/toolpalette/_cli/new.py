"""``toolpalette new pack NAME`` and ``toolpalette new skilljar BUNDLE_ID``: start a project."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Final

__all__ = ["NEXT_STEPS", "next_steps", "pack_files", "register", "skilljar_files"]

_PACK_NAME: Final = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
_BUNDLE_ID: Final = re.compile(r"^[a-z][a-z0-9-]*(?:\.[a-z][a-z0-9-]*)+$")
_CORE_REQUIREMENT: Final = "toolpalette>=0.1,<1"

NEXT_STEPS: Final = ('pip install -e ".[test]"', "python -m pytest")
"""What to run in a new project: install it with its test extra, then run its tests."""


def register(subparsers: Any) -> None:
    """Add ``new`` to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "new",
        help="start a tool pack or skilljar project",
        description="Write a ready project: pyproject, one tool or skill, tests, README.",
    )
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    pack = kinds.add_parser("pack", help="a tool pack (toolpalette.plugins)")
    pack.add_argument("name", metavar="NAME", help="the pack's name, e.g. weather")
    jar = kinds.add_parser("skilljar", help="a skilljar (toolpalette.skilljars)")
    jar.add_argument("name", metavar="BUNDLE_ID", help="the bundle id, e.g. io.example.ops")
    for sub in (pack, jar):
        sub.add_argument(
            "--dir",
            metavar="PATH",
            type=Path,
            help="where to write the project (default: ./<distribution name>)",
        )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the project; 0 on success, 2 when the name or the folder is refused."""
    try:
        if args.kind == "pack":
            dist, files = pack_files(args.name)
        else:
            dist, files = skilljar_files(args.name)
    except ValueError as exc:
        print(f"toolpalette new {args.kind}: {exc}", file=sys.stderr)
        return 2
    root: Path = args.dir if args.dir is not None else Path(dist)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        print(f"toolpalette new {args.kind}: {root} exists and is not empty", file=sys.stderr)
        return 2
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    print(f"Wrote {dist} into {root}:")
    for relative in files:
        print(f"  {relative}")
    print(f"Next: {next_steps(root)}")
    return 0


def next_steps(root: Path) -> str:
    """The one shell line that installs the project at ``root`` and runs its tests."""
    return " && ".join((f"cd {shlex.quote(str(root))}", *NEXT_STEPS))


def pack_files(name: str) -> tuple[str, dict[str, str]]:
    """The distribution name and the files of a tool pack named ``name``.

    Raises:
        ValueError: ``name`` is not lowercase letters and digits, with ``-`` or ``_``.
    """
    if not _PACK_NAME.match(name):
        raise ValueError(
            f"{name!r} is not a pack name: use lowercase letters and digits, "
            "with '-' or '_' between words (e.g. weather, web-search)"
        )
    entry = name.replace("-", "_")
    dist = f"toolpalette-{entry.replace('_', '-')}"
    package = f"toolpalette_{entry}"
    return dist, {
        "pyproject.toml": _PACK_PYPROJECT.format(dist=dist, entry=entry, package=package),
        f"src/{package}/__init__.py": f'"""The {entry} tool pack."""\n',
        f"src/{package}/hooks.py": _PACK_HOOKS.format(entry=entry, package=package),
        f"src/{package}/tools.py": _PACK_TOOLS.format(entry=entry),
        "tests/test_tools.py": _PACK_TESTS.format(dist=dist, entry=entry, package=package),
        "README.md": _PACK_README.format(
            dist=dist, entry=entry, package=package, install=NEXT_STEPS[0], test=NEXT_STEPS[1]
        ),
    }


def skilljar_files(bundle: str) -> tuple[str, dict[str, str]]:
    """The distribution name and the files of a skilljar for bundle id ``bundle``.

    Raises:
        ValueError: ``bundle`` is not a dotted, lowercase reverse-DNS id.
    """
    if not _BUNDLE_ID.match(bundle):
        raise ValueError(
            f"{bundle!r} is not a bundle id: use a dotted, lowercase reverse-DNS name "
            "you control (e.g. io.example.ops)"
        )
    last = bundle.rsplit(".", 1)[-1]
    dist = f"toolpalette-skilljar-{last}"
    package = f"toolpalette_skilljar_{last.replace('-', '_')}"
    fields = {"dist": dist, "bundle": bundle, "package": package}
    return dist, {
        "pyproject.toml": _JAR_PYPROJECT.format(**fields),
        f"src/{package}/__init__.py": f'"""The skill folders of the {bundle} bundle."""\n',
        f"src/{package}/getting-started/SKILL.md": _JAR_SKILL,
        f"src/{package}/getting-started/references/checklist.md": _JAR_REFERENCE,
        "tests/test_jar.py": _JAR_TESTS.format(**fields),
        "README.md": _JAR_README.format(**fields, install=NEXT_STEPS[0], test=NEXT_STEPS[1]),
    }


_PACK_PYPROJECT: Final = f"""[build-system]
requires = ["hatchling>=1.24"]
build-backend = "hatchling.build"

[project]
name = "{{dist}}"
version = "0.1.0"
description = "A toolpalette tool pack: {{entry}}."
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["{_CORE_REQUIREMENT}"]

[project.optional-dependencies]
test = ["pytest>=8", "pytest-asyncio>=0.24"]

[project.entry-points."toolpalette.plugins"]
{{entry}} = "{{package}}.hooks"

[tool.hatch.build.targets.wheel]
packages = ["src/{{package}}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
filterwarnings = ["error"]
"""

_PACK_HOOKS: Final = '''"""The {entry} pack's hooks: cheap to import, the tools load on demand."""

from __future__ import annotations

import toolpalette


@toolpalette.hookimpl
def toolpalette_register_tools() -> list[object]:
    """The pack's tools, imported here so that listing the pack imports none of them."""
    from {package}.tools import TOOLS

    return list(TOOLS)
'''

_PACK_TOOLS: Final = '''"""The {entry} tools."""

from __future__ import annotations

import toolpalette
from toolpalette import ToolError


@toolpalette.tool(read_only=True, timeout=5)
def greet(name: str, excited: bool = False) -> str:
    """Greet someone by name.

    Args:
        name: Who to greet.
        excited: End with an exclamation mark.
    """
    if not name.strip():
        raise ToolError("The name is empty.", code="empty_name", status=422)
    return f"Hello, {{name.strip()}}{{'!' if excited else '.'}}"


TOOLS = [greet]
'''

_PACK_TESTS: Final = '''"""Tests of the {entry} pack."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolpalette
from toolpalette import InvalidInputError
from toolpalette.testing import (
    as_provider,
    assert_discoverable,
    check_tool,
    make_registry,
    run_tool,
)
from {package}.tools import TOOLS, greet


def test_greet() -> None:
    assert run_tool(greet, {{"name": "Ada"}}) == "Hello, Ada."
    assert run_tool(greet, {{"name": "Ada", "excited": True}}) == "Hello, Ada!"


def test_input_is_validated_and_never_echoed() -> None:
    with pytest.raises(InvalidInputError) as info:
        run_tool(greet, {{"name": "Ada", "excited": "sk-secret"}})
    assert "at excited: expected boolean" in str(info.value)
    assert "sk-secret" not in str(info.value)


async def test_an_empty_name_is_a_422_the_model_can_read() -> None:
    result = await toolpalette.execute(make_registry(greet), "greet", {{"name": "  "}})
    assert (result.status, result.code, result.text) == (422, "empty_name", "The name is empty.")


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: as_provider(tool).name)
def test_every_tool_meets_the_contract(tool: object) -> None:
    check_tool(tool)


def test_the_hooks_module_imports_no_tool() -> None:
    # A host imports the hooks module to list the pack: the tools load only when needed.
    code = "import sys, {package}.hooks; print('{package}.tools' in sys.modules)"
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (ran.returncode, ran.stdout.strip()) == (0, "False"), ran.stderr


def test_discoverable_once_installed() -> None:  # needs: pip install -e .
    found = assert_discoverable("{dist}")
    assert found.packs == ("{entry}",)
    assert found.tools == tuple(sorted(as_provider(tool).name for tool in TOOLS))
'''

_PACK_README: Final = """# {dist}

A toolpalette tool pack. Its tools are in
`src/{package}/tools.py`; `hooks.py` hands them to toolpalette through the
`toolpalette.plugins` entry point `{entry}` declared in `pyproject.toml`.

```
{install}
{test}            # the tools, the contract, and discovery through the entry point
toolpalette list            # greet appears under the pack "{entry}"
toolpalette call greet --input '{{"name": "Ada"}}'
toolpalette check           # collisions, invalid schemas, import failures
```

Add a tool: write an `@toolpalette.tool` function (or `Tool` subclass) in `tools.py`,
append it to `TOOLS`, and test it with `toolpalette.testing.run_tool` (or, in an
`async def` test, `await toolpalette.execute(...)`, as the empty-name test does). The
contract and discovery tests cover every tool in `TOOLS`. Keep `hooks.py` cheap: it
imports the tools inside the hook, so listing the pack imports none of them.
"""

_JAR_PYPROJECT: Final = f"""[build-system]
requires = ["hatchling>=1.24"]
build-backend = "hatchling.build"

[project]
name = "{{dist}}"
version = "0.1.0"
description = "A toolpalette skilljar: the {{bundle}} skills."
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["{_CORE_REQUIREMENT}"]

[project.optional-dependencies]
test = ["pytest>=8"]

[project.entry-points."toolpalette.skilljars"]
"{{bundle}}" = "{{package}}"

[tool.hatch.build.targets.wheel]
packages = ["src/{{package}}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
# The skills' tests are synchronous: pytest-asyncio, if the environment has it (beside
# toolpalette's own tests, say), is not loaded, and its unset-option warning not shown.
addopts = ["-p", "no:asyncio"]
filterwarnings = ["error"]
"""

_JAR_SKILL: Final = """---
name: getting-started
description: Start an unfamiliar task with read-only tools. Use before changing anything.
---

# Getting started

1. Look before you change anything: list and read with read-only tools.
2. Write down what you found and what you plan to change.
3. Follow [the checklist](references/checklist.md) before the first change.
"""

_JAR_REFERENCE: Final = """# Checklist

- The change is the smallest that does the job.
- Someone can undo it.
"""

_JAR_TESTS: Final = '''"""Tests of the {bundle} skilljar."""

from __future__ import annotations

from pathlib import Path

from toolpalette import SkillRegistry
from toolpalette.testing import assert_discoverable

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "{package}"
# Every folder holding a SKILL.md is a skill of the bundle.
SKILLS = sorted(f"{bundle}/{{path.parent.name}}" for path in PACKAGE.glob("*/SKILL.md"))


def test_the_skills_load_clean() -> None:  # the folders as they are, nothing installed
    registry = SkillRegistry()
    registry.add_directory("{bundle}", PACKAGE)
    assert registry.ids() == SKILLS
    assert registry.problems() == []
    skill = registry.skill("{bundle}/getting-started")
    assert skill.read_text("references/checklist.md").startswith("# Checklist")


def test_discoverable_once_installed() -> None:  # needs: pip install -e .
    found = assert_discoverable("{dist}")
    assert found.bundles == ("{bundle}",)
    assert found.skills == tuple(SKILLS)
'''

_JAR_README: Final = """# {dist}

A toolpalette skilljar: the skills of the
bundle `{bundle}`, one folder per skill under `src/{package}/`, each with a
`SKILL.md` (front matter `name` and `description`, then the instructions) and optional
`references/`. The `toolpalette.skilljars` entry point in `pyproject.toml` maps the
bundle id to that package.

```
{install}
{test}            # the skills load clean, and the installed jar is discovered
toolpalette skills          # {bundle}/getting-started appears
toolpalette skills show {bundle}/getting-started
toolpalette check
```

Add a skill: a new folder whose name is the skill's name, with its `SKILL.md`.
"""
