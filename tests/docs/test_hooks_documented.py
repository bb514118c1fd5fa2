"""Every hook is documented under its exact signature, and has a test of its own."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from toolpalette import ToolHub, hookspecs

ROOT = Path(__file__).resolve().parents[2]
HOOK_DOC = ROOT / "docs" / "hooks.md"
HOOKS = sorted(
    name
    for name, obj in vars(hookspecs).items()
    if name.startswith("toolpalette_") and inspect.isfunction(obj)
)


def signature_of(name: str) -> str:
    params = inspect.signature(getattr(hookspecs, name)).parameters
    return f"{name}({', '.join(params)})"


def test_every_hookspec_is_a_registered_spec() -> None:
    pm = ToolHub(autoload=False, config={}).pm
    assert sorted(h for h in vars(pm.hook) if h.startswith("toolpalette_")) == HOOKS


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented_with_its_signature(name: str) -> None:
    headings = re.findall(r"^### `(.+)`$", HOOK_DOC.read_text(encoding="utf-8"), re.M)
    assert signature_of(name) in headings


@pytest.mark.parametrize("name", HOOKS)
def test_hook_has_a_test(name: str) -> None:
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py"))
    assert re.search(rf"def test_hook_{name}\b", tests), f"no test_hook_{name}"
