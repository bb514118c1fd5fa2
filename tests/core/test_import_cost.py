"""``import toolpalette`` stays cheap: no jsonschema, mcp, Monty, OpenTelemetry or pack. Counted."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN = ("jsonschema", "referencing", "mcp", "opentelemetry", "pydantic_monty")


def modules_after(*statements: str) -> set[str]:
    """The modules loaded in a fresh interpreter after running ``statements``."""
    code = "\n".join(["import json, sys", *statements, "print(json.dumps(sorted(sys.modules)))"])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.fixture(scope="module")
def after_import() -> set[str]:
    return modules_after("import toolpalette")


@pytest.mark.parametrize("name", FORBIDDEN)
def test_import_toolpalette_does_not_import(after_import: set[str], name: str) -> None:
    assert name not in top_level(after_import)


def test_import_toolpalette_imports_no_pack(after_import: set[str]) -> None:
    packs = sorted(m for m in top_level(after_import) if m.startswith("toolpalette_"))
    assert packs == []


def test_import_toolpalette_loads_no_plugin_or_test_helpers(after_import: set[str]) -> None:
    assert "toolpalette.testing" not in after_import
    assert "_pytest" not in top_level(after_import)


def test_the_check_can_fail() -> None:
    # The same measurement sees jsonschema once something really imports it.
    assert "jsonschema" in top_level(modules_after("import toolpalette", "import jsonschema"))
