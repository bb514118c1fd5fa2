"""Pack records: lazy metadata, the requirement check on toolpalette, the scan."""

from __future__ import annotations

from typing import Any

import pytest
from toolpalette._plugins.discovery import PLUGIN_GROUP
from toolpalette._plugins.packs import Pack, scan


class FakeDist:
    def __init__(self, text: str) -> None:
        self.text = text
        self.reads = 0

    def read_text(self, name: str) -> str | None:
        self.reads += 1
        return self.text if name == "METADATA" else None


class FakeEntryPoint:
    group = PLUGIN_GROUP
    name = "demo"
    value = "demo_pkg.hooks"

    def __init__(self, dist: Any) -> None:
        self.dist = dist


def pack_with(*requires: str, extra_headers: str = "") -> Pack:
    lines = [
        "Metadata-Version: 2.1",
        "Name: demo-dist",
        "Version: 2.0",
        *extra_headers.splitlines(),
    ]
    lines += [f"Requires-Dist: {r}" for r in requires]
    text = "\n".join(lines) + "\n\nRequires-Dist: toolpalette>=99 (in the body: ignored)\n"
    return Pack("demo", "demo_pkg.hooks", entry_point=FakeEntryPoint(FakeDist(text)))


def test_metadata_is_read_once_and_only_when_asked():
    pack = pack_with("toolpalette")
    dist = pack._entry_point.dist  # type: ignore[attr-defined]
    assert dist.reads == 0
    assert (pack.distribution, pack.label) == ("demo-dist", "demo-dist 2.0")
    assert pack.origin.version == "2.0"
    assert pack.incompatibility() is None
    assert dist.reads == 1


@pytest.mark.parametrize(
    "requires",
    [
        (),
        ("toolpalette",),
        ("toolpalette[mcp]",),
        ("toolpalette>=0.1,<1",),
        ("toolpalette-files>=99",),
        ("toolpalette>=99; extra == 'test'",),
        ("toolpalette>=99; python_version < '3'",),
        ("not a requirement at all ((",),
    ],
)
def test_compatible_requirements(requires: tuple[str, ...]):
    assert pack_with(*requires).incompatibility() is None


@pytest.mark.parametrize(
    "requirement", ["toolpalette>=99", "Toolpalette (>=99)", "toolpalette<0.1"]
)
def test_an_excluding_requirement_is_reported(requirement: str):
    error = pack_with("pydantic>=2", requirement).incompatibility()
    assert error is not None
    assert error.plugin_name == "demo"
    assert error.installed == "0.1.0"


def test_folded_header_lines_are_not_read_as_headers():
    pack = pack_with(extra_headers="License: MIT\n        Requires-Dist: toolpalette>=99")
    assert pack.incompatibility() is None


def test_a_plugin_added_in_code_has_no_distribution():
    pack = Pack("code", "my_module")
    assert (pack.info, pack.distribution, pack.label, pack.incompatibility()) == (
        None,
        None,
        None,
        None,
    )
    assert pack.origin.pack == "code"


def test_scan_of_an_unused_group_is_empty():
    assert scan("toolpalette.no-such-group") == []
