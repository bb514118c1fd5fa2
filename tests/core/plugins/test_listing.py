"""The cross-process listing cache: hits import no pack, and anything that changes misses."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
from toolpalette import ToolHub
from toolpalette._plugins.listing import CACHE_DIR_ENV, NO_CACHE_ENV, cache_file

MODULE = "tp_listing_pack"


def install_pack(site: Path, *, editable: bool = False, record: str = "x,,\n") -> Path:
    """A real (if minimal) installed distribution: dist-info with RECORD, and its module."""
    (site / f"{MODULE}.py").write_text(
        "import toolpalette\n\n"
        "@toolpalette.tool(read_only=True)\n"
        "def shout(text: str) -> str:\n"
        '    """Return the text in capitals."""\n'
        "    return text.upper()\n\n"
        "@toolpalette.hookimpl\n"
        "def toolpalette_register_tools():\n"
        "    return [shout]\n"
    )
    info = site / "tp_listing_pack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tp-listing-pack\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[toolpalette.plugins]\nshouts = {MODULE}\n")
    (info / "RECORD").write_text(record)
    if editable:
        (info / "direct_url.json").write_text(
            json.dumps({"url": "file:///src", "dir_info": {"editable": True}})
        )
    importlib.invalidate_caches()
    return info


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(NO_CACHE_ENV, raising=False)
    # Only this pack: whatever else is installed here (editable packs, say) stays out.
    monkeypatch.setenv("TOOLPALETTE_PLUGINS", "shouts")
    yield folder
    sys.modules.pop(MODULE, None)


def test_a_second_listing_comes_from_the_cache_without_importing_the_pack(site: Path) -> None:
    install_pack(site)
    first = ToolHub(config={}).listing()
    assert not first.cached
    assert [t.name for t in first.tools] == ["shout"]
    sys.modules.pop(MODULE)
    second = ToolHub(config={}).listing()
    assert second.cached
    assert second.tools == first.tools
    assert second.problems == first.problems
    assert MODULE not in sys.modules
    shout = next(t for t in second.tools if t.name == "shout")
    assert (shout.pack, shout.distribution, shout.version, shout.read_only) == (
        "shouts",
        "tp-listing-pack",
        "1.0",
        True,
    )


def test_a_reinstalled_pack_is_a_miss(site: Path) -> None:
    info = install_pack(site)
    ToolHub(config={}).listing()
    (info / "RECORD").write_text("x,sha256=changed,\n")
    assert not ToolHub(config={}).listing().cached


def test_other_renames_are_a_miss(site: Path) -> None:
    install_pack(site)
    ToolHub(config={}).listing()
    renamed = ToolHub(config={}, rename={"shout": "yell"})
    listing = renamed.listing()
    assert not listing.cached
    assert "yell" in [t.name for t in listing.tools]


def test_a_corrupt_cache_is_a_miss_and_is_rewritten(site: Path) -> None:
    install_pack(site)
    ToolHub(config={}).listing()
    path = cache_file()
    assert path is not None
    path.write_text("{not json")
    assert not ToolHub(config={}).listing().cached
    assert json.loads(path.read_text())["key"]


def test_an_editable_pack_is_never_cached(site: Path) -> None:
    install_pack(site, editable=True)
    assert not ToolHub(config={}).listing().cached
    assert not ToolHub(config={}).listing().cached
    path = cache_file()
    assert path is not None
    assert not path.exists()


def test_the_cache_can_be_turned_off(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_CACHE_ENV, "1")
    install_pack(site)
    assert cache_file() is None
    assert not ToolHub(config={}).listing().cached
    assert not ToolHub(config={}).listing().cached
