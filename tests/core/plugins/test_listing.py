"""The cross-process listing cache: hits import no pack, and anything that changes misses."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toolpalette import ToolHub

CACHE_DIR_ENV = "TOOLPALETTE_CACHE_DIR"
NO_CACHE_ENV = "TOOLPALETTE_NO_CACHE"

MODULE = "tp_listing_pack"


def install_pack(
    site: Path, *, editable: bool = False, record: str = "x,,\n", requires: str = ""
) -> Path:
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
    metadata = "Metadata-Version: 2.1\nName: tp-listing-pack\nVersion: 1.0\n"
    if requires:
        metadata += f"Requires-Dist: {requires}\n"
    (info / "METADATA").write_text(metadata)
    (info / "entry_points.txt").write_text(f"[toolpalette.plugins]\nshouts = {MODULE}\n")
    (info / "RECORD").write_text(record)
    if editable:
        (info / "direct_url.json").write_text(
            json.dumps({"url": "file:///src", "dir_info": {"editable": True}})
        )
    importlib.invalidate_caches()
    return info


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """The cache file the hub writes under TOOLPALETTE_CACHE_DIR (documented name)."""
    return tmp_path / "cache" / "listing.json"


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


def test_a_corrupt_cache_is_a_miss_and_is_rewritten(site: Path, cache: Path) -> None:
    install_pack(site)
    ToolHub(config={}).listing()
    path = cache
    assert path.is_file()
    path.write_text("{not json")
    assert not ToolHub(config={}).listing().cached
    assert json.loads(path.read_text())["key"]


def test_an_editable_pack_is_never_cached(site: Path, cache: Path) -> None:
    install_pack(site, editable=True)
    assert not ToolHub(config={}).listing().cached
    assert not ToolHub(config={}).listing().cached
    assert not cache.exists()


def test_the_cache_can_be_turned_off(
    site: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(NO_CACHE_ENV, "1")
    install_pack(site)
    assert not ToolHub(config={}).listing().cached
    assert not ToolHub(config={}).listing().cached
    assert not cache.parent.exists()


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_CACHE_HOME is the Linux convention")
def test_the_default_cache_is_the_platform_user_cache_folder(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    install_pack(site)
    ToolHub(config={}).listing()
    assert (tmp_path / "xdg" / "toolpalette" / "listing.json").is_file()
    assert ToolHub(config={}).listing().cached


LISTING_JSON = (
    "import json; from toolpalette import ToolHub; found = ToolHub(config={}).listing(); "
    "print(json.dumps({'cached': found.cached, 'tools': [t.name for t in found.tools], "
    "'problems': [p.kind for p in found.problems]}))"
)


def listing_in_a_fresh_process(*path: Path) -> dict[str, object]:
    """``hub.listing()`` in a new interpreter whose sys.path starts with ``path``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    done = subprocess.run(
        [sys.executable, "-c", LISTING_JSON],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_upgrading_the_core_under_a_warm_cache_is_a_miss(site: Path, tmp_path: Path) -> None:
    import toolpalette

    installed = toolpalette.__version__
    install_pack(site, requires=f"toolpalette<={installed}")
    warm = listing_in_a_fresh_process(site)
    assert warm == {"cached": False, "tools": ["shout"], "problems": []}
    assert listing_in_a_fresh_process(site)["cached"] is True
    # Upgrade the core: its metadata, first on the path, now says 99.0, which the
    # pack excludes. The warm cache must not answer for it.
    upgraded = tmp_path / "upgraded"
    (upgraded / "toolpalette-99.0.dist-info").mkdir(parents=True)
    (upgraded / "toolpalette-99.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolpalette\nVersion: 99.0\n"
    )
    after = listing_in_a_fresh_process(upgraded, site)
    assert after == {"cached": False, "tools": [], "problems": ["incompatible"]}


def test_a_warm_toolpalette_list_imports_no_pydantic_asyncio_or_hub(site: Path) -> None:
    install_pack(site)
    command = (
        "import sys; from toolpalette._cli import main; status = main(); "
        "sys.stderr.write('\\nIMPORTED ' + ' '.join(sys.modules)); sys.exit(status)"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}

    def list_command() -> tuple[dict[str, object], set[str]]:
        done = subprocess.run(
            [sys.executable, "-c", command, "list", "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=60,
        )
        imported = done.stderr.rpartition("IMPORTED ")[2].split()
        return json.loads(done.stdout), set(imported)

    cold, imported_cold = list_command()
    warm, imported_warm = list_command()
    assert cold == warm
    assert [t["name"] for t in warm["tools"]] == ["shout"]  # type: ignore[index]
    heavy = {"pydantic", "asyncio", "toolpalette._hub", MODULE}
    assert {"pydantic", MODULE} <= imported_cold  # the cold listing imported the pack
    assert heavy & imported_warm == set()


def test_packs_a_listing_imported_join_the_plugin_manager_on_its_first_use(site: Path) -> None:
    install_pack(site)
    hub = ToolHub(config={})
    assert not hub.listing().cached
    assert hub.pm.get_plugin("shouts") is sys.modules[MODULE]
    assert hub.pm.hooks_of("shouts") == ["toolpalette_register_tools"]
    returned = hub.pm.hook.toolpalette_register_tools()
    assert [[tool.__name__ for tool in result] for result in returned] == [["shout"]]
    assert {p.name: p.status for p in hub.plugins()}["shouts"] == "loaded"
