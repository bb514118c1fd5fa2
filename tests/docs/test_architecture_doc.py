"""docs/architecture.md stays true: its module tree is the package, its tests exist.

The tree under "## The layers" must hold every module and subpackage of
``core/src/toolpalette`` at its place, and nothing that is gone; every test it names
(``tests/...py`` or ``tests/...py::test_name``) must exist; every hook of
``toolpalette.hookspecs`` must be placed in "## Where each hook fires".
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from toolpalette import hookspecs

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "core" / "src" / "toolpalette"
TEST_REF = re.compile(r"(tests/[\w./-]+\.py)(?:::(\w+))?")


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def tree_paths() -> set[str]:
    """The paths the first code block of "The layers" lists, rebuilt from its indentation."""
    block = _section("The layers").split("```")[1]
    paths: set[str] = set()
    stack: list[str] = []
    for line in block.splitlines()[1:]:
        match = re.match(r"^([│├└─\s]+)(\S+)", line)
        if match is None:  # the root line, toolpalette/
            continue
        depth = len(match.group(1)) // 4
        name = match.group(2)
        stack = stack[: depth - 1]
        path = "/".join([*stack, name.rstrip("/")])
        paths.add(path + ("/" if name.endswith("/") else ""))
        if name.endswith("/"):
            stack.append(name.rstrip("/"))
    return paths


def package_paths() -> set[str]:
    """Every module (``x.py``, not ``__init__.py``) and subpackage (``x/``) of the core."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if "__pycache__" in relative.parts:
            continue
        if path.name == "__init__.py":
            if relative.parent != Path("."):
                found.add(relative.parent.as_posix() + "/")
        else:
            found.add(relative.as_posix())
    return found


def test_the_tree_lists_every_module_and_subpackage() -> None:
    listed = tree_paths()
    missing = sorted(package_paths() - listed)
    assert missing == [], f"add these to the tree in docs/architecture.md: {missing}"


def test_the_tree_lists_nothing_that_is_gone() -> None:
    listed = {p for p in tree_paths() if p.endswith((".py", "/"))}
    gone = sorted(p for p in listed if not (PACKAGE / p).exists())
    assert gone == [], f"no such module any more: {gone}"


def test_every_test_it_names_exists() -> None:
    refs = TEST_REF.findall(DOC.read_text(encoding="utf-8"))
    assert len(refs) >= 10
    missing = []
    for path, name in refs:
        file = ROOT / path
        if not file.is_file():
            missing.append(path)
        elif name and not re.search(rf"def {name}\b", file.read_text(encoding="utf-8")):
            missing.append(f"{path}::{name}")
    assert missing == []


def test_every_hook_is_placed() -> None:
    section = _section("Where each hook fires")
    hooks = [n for n, o in vars(hookspecs).items() if n.startswith("toolpalette_")]
    assert all(inspect.isfunction(getattr(hookspecs, n)) for n in hooks)
    assert [h for h in hooks if f"`{h}`" not in section] == []


def test_the_readme_links_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("docs/architecture.md") >= 2  # the guides and the layout
