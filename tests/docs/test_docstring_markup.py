"""Module docstrings: Markdown (no reStructuredText roles), and one to three lines each.

mkdocstrings shows ``:class:`X``` as raw text; test_built_site.py checks the built pages.
A module's rationale lives in docs/architecture.md, not in its docstring.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|exc|data|obj|const|ref):`")
MODULES = ("toolpalette", "toolpalette.errors", "toolpalette.hookspecs", "toolpalette.testing")
ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
# The core's sources and the first-party packs' and skilljars'.
SOURCES = (ROOT / "core" / "src", *ROOT.glob("plugins/*/src"), *ROOT.glob("skilljars/*/src"))
MAX_MODULE_DOC_LINES = 3


def _documented(module: ModuleType) -> list[tuple[str, str]]:
    found = [(module.__name__, module.__doc__ or "")]
    for name in getattr(module, "__all__", []):
        value = getattr(module, name)
        if not (inspect.isclass(value) or inspect.isroutine(value)):
            continue  # a constant or an instance: its docstring is its class's, not shown
        found.append((f"{module.__name__}.{name}", inspect.getdoc(value) or ""))
        if inspect.isclass(value):
            for member, attribute in vars(value).items():
                if member.startswith("_") and member != "__init__":
                    continue
                doc = getattr(attribute, "__doc__", None)
                if isinstance(doc, str):
                    found.append((f"{module.__name__}.{name}.{member}", doc))
    return found


def _roles_in(modules: list[ModuleType]) -> list[str]:
    return [
        f"{where}: {ROLE.search(doc).group(0)}"  # type: ignore[union-attr]
        for module in modules
        for where, doc in _documented(module)
        if ROLE.search(doc)
    ]


def test_no_public_docstring_holds_a_sphinx_role() -> None:
    assert _roles_in([importlib.import_module(name) for name in MODULES]) == []


def test_no_docstring_of_the_mcp_and_adapters_modules_holds_a_sphinx_role() -> None:
    pytest.importorskip("mcp", reason="toolpalette.mcp needs the mcp extra")
    import toolpalette.adapters
    import toolpalette.mcp

    assert _roles_in([toolpalette.mcp, toolpalette.adapters]) == []


def test_the_check_finds_a_role_it_is_given() -> None:
    module = ModuleType("sample", "See :class:`Thing`.")
    module.__all__ = []  # type: ignore[attr-defined]
    assert _roles_in([module]) == ["sample: :class:`"]


def _module_doc_lines(path: Path) -> int | None:
    """The non-empty lines of a module's docstring, None when it has none."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
    return None if doc is None else sum(1 for line in doc.splitlines() if line.strip())


def _module_paths() -> list[Path]:
    return sorted(p for source in SOURCES for p in source.rglob("*.py") if "build" not in p.parts)


def test_every_module_docstring_is_one_to_three_lines() -> None:
    paths = _module_paths()
    assert len(paths) > 100
    wrong = {}
    for path in paths:
        lines = _module_doc_lines(path)
        if lines is None or not 1 <= lines <= MAX_MODULE_DOC_LINES:
            wrong[path.relative_to(ROOT).as_posix()] = lines
    assert wrong == {}, "a module docstring says what the module is for, in 1 to 3 lines"


def test_the_line_count_skips_blank_lines(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Summary.\n\nOne.\nTwo.\n"""\n', encoding="utf-8")
    assert _module_doc_lines(module) == 3
    module.write_text("x = 1\n", encoding="utf-8")
    assert _module_doc_lines(module) is None
