"""Pack records: lazy metadata, the requirement check on toolpalette, the scan, the key."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from toolpalette._plugins.discovery import PLUGIN_GROUP
from toolpalette._plugins.installed import fingerprint, snapshot
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


GROUP = "toolpalette.test-scan"


def dist_info(
    site: Path, folder: str, *, name: str, version: str, entry_points: str, record: str = ""
) -> Path:
    """A metadata folder as an installer writes it, in ``site``."""
    info = site / folder
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(entry_points)
    (info / "RECORD").write_text(record)
    return info


@pytest.fixture
def sites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))  # first on the path
    return first, second


def test_the_scan_reads_each_distribution_once_the_first_on_the_path(
    sites: tuple[Path, Path],
) -> None:
    first, second = sites
    table = (
        f"# a comment\n[{GROUP}]\ndemo = demo_pkg.hooks:plugin\nno equals sign\n\n[other]\nx = y\n"
    )
    dist_info(first, "demo_dist-1.0.dist-info", name="demo-dist", version="1.0", entry_points=table)
    dist_info(
        second, "Demo.Dist-2.0.dist-info", name="Demo.Dist", version="2.0", entry_points=table
    )
    other = f"[{GROUP}]\nzeta = zeta_pkg\n"
    dist_info(second, "zeta-3.0.dist-info", name="zeta", version="3.0", entry_points=other)
    packs = scan(GROUP)
    assert [(p.name, p.module) for p in packs] == [("demo", "demo_pkg.hooks"), ("zeta", "zeta_pkg")]
    assert (packs[0].label, packs[1].label) == ("demo-dist 1.0", "zeta 3.0")
    assert packs[0].info is not None
    assert packs[0].info.value == "demo_pkg.hooks:plugin"


def test_a_scanned_packs_metadata_is_read_on_first_use_and_once(
    sites: tuple[Path, Path],
) -> None:
    first, _ = sites
    table = f"[{GROUP}]\ndemo = demo_pkg.hooks\n"
    info = dist_info(first, "demo-1.0.dist-info", name="demo", version="1.0", entry_points=table)
    (pack,) = scan(GROUP, snapshot())
    metadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.1\nRequires-Dist: toolpalette>=99\n"
    (info / "METADATA").write_text(metadata)  # after the scan: the scan did not read it
    assert pack.label == "demo 1.1"
    error = pack.incompatibility()
    assert error is not None
    assert error.required == ">=99"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 9.9\n")
    assert pack.label == "demo 1.1"  # read once


def test_an_archive_on_the_path_is_scanned_through_the_standard_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "packs.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
        zipped.writestr("zipped-1.0.dist-info/entry_points.txt", f"[{GROUP}]\nzip = zip_pkg\n")
    monkeypatch.syspath_prepend(str(archive))
    assert snapshot() is None
    assert fingerprint(GROUP, lambda name: True) is None  # never cached
    (pack,) = scan(GROUP)
    assert (pack.name, pack.module, pack.label) == ("zip", "zip_pkg", "zipped 1.0")


def test_the_fingerprint_follows_a_packs_record_and_ignores_unused_ones(
    sites: tuple[Path, Path],
) -> None:
    first, _ = sites
    table = f"[{GROUP}]\ndemo = demo_pkg.hooks\n"
    info = dist_info(first, "demo-1.0.dist-info", name="demo", version="1.0", entry_points=table)
    before = fingerprint(GROUP, lambda name: True)
    assert before is not None
    (info / "RECORD").write_text("demo_pkg/hooks.py,sha256=other,10\n")
    after = fingerprint(GROUP, lambda name: True)
    assert after not in (None, before)
    (info / "direct_url.json").write_text('{"url": "file:///src", "dir_info": {"editable": true}}')
    assert fingerprint(GROUP, lambda name: True) is None  # an editable pack: never cached
    assert fingerprint(GROUP, lambda name: False) is not None  # unless it is not used
