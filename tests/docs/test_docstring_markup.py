"""The docstrings the API reference renders are Markdown: no reStructuredText roles.

mkdocstrings shows ``:class:`X``` as raw text; test_built_site.py checks the built pages.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|exc|data|obj|const|ref):`")
MODULES = ("toolpalette", "toolpalette.errors", "toolpalette.hookspecs", "toolpalette.testing")
SITE = Path(__file__).resolve().parents[2] / "site"


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
