"""The hub against real installed distributions: the test-only packs of tests/integration/packs.

Run by ``nox -s dists``, which installs the first-party packs and every test-only pack
(healthy, colliding, broken of each kind) into a fresh virtual environment. Questions
about what a process imported are asked in a fresh interpreter, so that other tests in
this one cannot have imported anything first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest
import toolpalette
from toolpalette import Origin, Problem, ToolCollisionError, ToolHub

pytestmark = pytest.mark.dists

TEST_PACKS = (
    "alpha",
    "bad_args",
    "beta",
    "broken_exit",
    "broken_hook",
    "broken_import",
    "garbage",
    "healthy",
    "incompatible",
    "side_effect",
    "twice",
    "twice_alias",
    "unknown_hook",
)
SWITCHES = (
    "TOOLPALETTE_PLUGINS",
    "TOOLPALETTE_BLOCK_PLUGINS",
    "TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD",
    "TOOLPALETTE_TRACE_PLUGINS",
)


@pytest.fixture(autouse=True)
def _clean_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter of this environment, with extra environment."""
    full_env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        check=False,
        timeout=60,
    )


def json_of(code: str, **env: str) -> object:
    """Run ``code`` (which prints one JSON document last) and return that document."""
    done = run_python(code, **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


IMPORTED = """
import json, sys
def pack_modules():
    return sorted(m for m in sys.modules
                  if m.startswith(("tp_testpack_", "toolpalette_files", "toolpalette_sqlite")))
"""


def names(providers: object) -> list[str]:
    return sorted(p.name for p in providers)  # type: ignore[attr-defined]


# -- discovery and laziness ---------------------------------------------------------


def test_every_test_pack_is_discovered_without_importing_any():
    found = json_of(
        IMPORTED
        + """
from toolpalette import ToolHub
hub = ToolHub()
print(json.dumps({"plugins": [p.name for p in hub.plugins()], "imported": pack_modules(),
                  "loaded": hub.loaded_packs()}))
"""
    )
    assert isinstance(found, dict)
    assert set(TEST_PACKS) <= set(found["plugins"])
    assert found["imported"] == []
    assert found["loaded"] == []


def test_selecting_one_package_imports_that_pack_only():
    found = json_of(
        IMPORTED
        + """
from toolpalette import ToolHub
hub = ToolHub()
tools = sorted(p.name for p in hub.providers_for_package("tp_testpack_healthy"))
print(json.dumps({"tools": tools, "imported": pack_modules(), "loaded": hub.loaded_packs()}))
"""
    )
    assert found == {
        "tools": ["counter", "echo", "upper"],
        "imported": [
            "tp_testpack_healthy",
            "tp_testpack_healthy.hooks",
            "tp_testpack_healthy.tools",
        ],
        "loaded": ["healthy"],
    }


def test_selecting_one_distribution_imports_that_pack_only():
    found = json_of(
        IMPORTED
        + """
from toolpalette import ToolHub
hub = ToolHub()
tools = sorted(p.name for p in hub.providers_for_distribution("toolpalette_testpack_alpha"))
print(json.dumps({"tools": tools, "imported": pack_modules()}))
"""
    )
    assert found == {
        "tools": ["alpha_only", "search"],
        "imported": ["tp_testpack_alpha", "tp_testpack_alpha.hooks"],
    }


def test_selection_of_an_unknown_package_imports_nothing():
    found = json_of(
        IMPORTED
        + """
from toolpalette import ToolHub
hub = ToolHub()
tools = hub.providers_for_package("tp_testpack")  # a prefix of names, not a package
print(json.dumps({"tools": len(tools), "imported": pack_modules()}))
"""
    )
    assert found == {"tools": 0, "imported": []}


def test_the_catalog_is_one_registry_that_grows_as_packs_load():
    hub = ToolHub()
    version = hub.version
    assert names(hub.providers_for_package("tp_testpack_healthy")) == ["counter", "echo", "upper"]
    assert hub.version > version
    catalog = hub.catalog()
    assert catalog is hub.catalog()
    assert {"echo", "counter", "upper", "steady", "fine", "alpha_only"} <= set(catalog.tool_names())
    assert set(TEST_PACKS) - {"bad_args", "broken_exit", "broken_import", "incompatible"} == (
        set(hub.loaded_packs()) & set(TEST_PACKS)
    )


def test_every_tool_knows_its_pack_distribution_version_and_module():
    catalog = ToolHub().catalog()
    assert catalog.get_provider("echo").origin == Origin(
        "healthy", "toolpalette-testpack-healthy", "0.1.0", "tp_testpack_healthy.tools"
    )
    assert catalog.get_provider("upper").origin == Origin(
        "healthy", "toolpalette-testpack-healthy", "0.1.0", "tp_testpack_healthy.tools"
    )
    assert catalog.get_provider("alpha_only").origin == Origin(
        "alpha", "toolpalette-testpack-alpha", "0.1.0", "tp_testpack_alpha.hooks"
    )


def test_tools_from_installed_packs_run():
    catalog = ToolHub().catalog()
    echo = catalog.get_provider("echo")
    assert echo.create().invoke(echo.parse_input({"text": "hi"})) == "hi"
    upper = catalog.get_provider("upper")
    assert upper.create().invoke(upper.parse_input('{"text": "hi"}')) == "HI"


# -- collisions -----------------------------------------------------------------------


def test_a_collision_offers_neither_tool_and_names_both_distributions():
    hub = ToolHub()
    catalog = hub.catalog()
    assert not catalog.has_tool("search")
    collisions = [p for p in hub.problems() if p.kind == "collision" and p.item == "search"]
    assert len(collisions) == 1
    reason = collisions[0].reason
    assert "toolpalette-testpack-alpha 0.1.0" in reason
    assert "toolpalette-testpack-beta 0.1.0" in reason
    assert collisions[0].pack == "alpha, beta"


def test_strict_catalog_raises_the_collision_naming_both_distributions():
    with pytest.raises(ToolCollisionError) as caught:
        ToolHub().catalog(strict=True)
    assert caught.value.tool_name == "search"
    assert "toolpalette-testpack-alpha" in caught.value.first
    assert "toolpalette-testpack-beta" in caught.value.second


def test_selecting_a_contested_name_is_the_collision_with_its_fix():
    from toolpalette import Thinker, ToolSelector

    class Searcher(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool("search")

    for select in (
        lambda hub: ToolSelector().tool("search").resolve(hub),
        lambda hub: hub.bind(Searcher).begin_turn(),
    ):
        with pytest.raises(ToolCollisionError) as caught:
            select(ToolHub())
        error = caught.value
        assert error.tool_name == "search"
        claimants = f"{error.first} {error.second}"
        assert "toolpalette-testpack-alpha 0.1.0" in claimants
        assert "toolpalette-testpack-beta 0.1.0" in claimants
        assert all(fix in error.hint for fix in ("rename", "prefix", "exclude"))


def _outcome(hub: ToolHub) -> tuple[list[str], list[str]]:
    catalog = hub.catalog()
    return [p.name for p in catalog], [str(p) for p in hub.problems()]


@pytest.mark.parametrize(
    "first",
    [
        ["alpha", "beta"],
        ["beta", "alpha"],
        ["twice_alias", "broken_hook", "beta"],
        list(reversed(TEST_PACKS)),
    ],
)
def test_results_do_not_depend_on_load_order(first: list[str]):
    reference = _outcome(ToolHub())
    hub = ToolHub()
    for pack in first:
        hub.providers_for_pack(pack)
    assert _outcome(hub) == reference


def test_load_order_in_fresh_processes_gives_the_same_catalog_and_problems():
    code = """
import json
from toolpalette import ToolHub
hub = ToolHub()
for pack in {order!r}:
    hub.providers_for_pack(pack)
catalog = hub.catalog()
print(json.dumps([[p.name for p in catalog], [str(p) for p in hub.problems()]]))
"""
    forward = json_of(code.format(order=["alpha", "beta"]))
    backward = json_of(code.format(order=["beta", "alpha"]))
    assert forward == backward


def test_a_prefix_resolves_the_collision():
    hub = ToolHub(prefix={"beta": "beta_"})
    catalog = hub.catalog()
    assert catalog.get_provider("search").origin.pack == "alpha"  # type: ignore[union-attr]
    renamed = catalog.get_provider("beta_search")
    assert renamed.origin.pack == "beta"  # type: ignore[union-attr]
    assert set(renamed.input_schema["properties"]) == {"query", "limit"}
    assert catalog.has_tool("beta_beta_only")
    assert not [p for p in hub.problems() if p.kind == "collision"]


def test_a_rename_in_a_config_file_resolves_the_collision(tmp_path: Path):
    config = tmp_path / "toolpalette.toml"
    config.write_text(
        '[rename]\n"alpha.search" = "alpha_search"\n\n[packs.healthy]\nroot = "/srv/work"\n',
        encoding="utf-8",
    )
    hub = ToolHub(config=config)
    catalog = hub.catalog()
    assert catalog.get_provider("alpha_search").origin.pack == "alpha"  # type: ignore[union-attr]
    assert catalog.get_provider("search").origin.pack == "beta"  # type: ignore[union-attr]
    assert hub.pack_config("healthy") == {"root": "/srv/work"}
    hub.catalog(strict=True)  # no collision left: does not raise


def test_one_module_behind_two_entry_points_is_registered_once():
    hub = ToolHub()
    catalog = hub.catalog()
    assert catalog.tool_names().count("twice_tool") == 1
    assert catalog.get_provider("twice_tool").origin.pack == "twice"  # type: ignore[union-attr]
    assert {"twice", "twice_alias"} <= set(hub.loaded_packs())
    assert hub.pm.get_plugin("twice") is not None
    assert hub.pm.get_plugin("twice_alias") is None
    assert not [p for p in hub.problems() if p.pack and "twice" in p.pack]


# -- broken packs ---------------------------------------------------------------------


def _problems_of(hub: ToolHub, pack: str) -> list[tuple[str, str | None]]:
    return [(p.kind, p.item) for p in hub.problems() if p.pack == pack]


@pytest.fixture(scope="module")
def loaded() -> ToolHub:
    hub = ToolHub()
    hub.catalog()
    return hub


def test_an_import_error_is_reported_with_its_distribution(loaded: ToolHub):
    (problem,) = [p for p in loaded.problems() if p.pack == "broken_import"]
    assert problem.kind == "import"
    assert problem.distribution == "toolpalette-testpack-broken-import 0.1.0"
    assert "ModuleNotFoundError" in problem.reason
    assert "tp_testpack_no_such_module" in problem.reason


def test_system_exit_at_import_is_reported_not_raised(loaded: ToolHub):
    (problem,) = [p for p in loaded.problems() if p.pack == "broken_exit"]
    assert problem.kind == "import"
    assert "SystemExit" in problem.reason


def test_a_raising_hook_loses_only_its_own_contribution(loaded: ToolHub):
    assert _problems_of(loaded, "broken_hook") == [("hook", None)]
    assert loaded.catalog().has_tool("steady")


def test_garbage_is_refused_item_by_item_and_the_good_tool_kept(loaded: ToolHub):
    problems = _problems_of(loaded, "garbage")
    assert sorted(problems, key=str) == sorted(
        [
            ("garbage", None),  # 42
            ("garbage", None),  # None inside the list
            ("garbage", None),  # a bare 7 from the second implementation
            ("garbage", "object"),
            ("garbage", "not_a_tool"),
            ("invalid-tool", "no_description"),
            ("invalid-tool", "bad name!"),
            ("invalid-tool", "invalid_schema"),
            ("invalid-tool", "remote_ref"),
            ("invalid-tool", "file_ref"),
        ],
        key=str,
    )
    catalog = loaded.catalog()
    assert catalog.has_tool("fine")
    assert not {"invalid_schema", "remote_ref", "file_ref", "no_description"} & set(
        catalog.tool_names()
    )


def test_remote_references_are_refused_not_fetched(loaded: ToolHub):
    reasons = [p.reason for p in loaded.problems() if p.item in ("remote_ref", "file_ref")]
    assert len(reasons) == 2
    assert all("only local references" in r for r in reasons)


def test_an_unknown_hook_is_reported_and_the_known_one_still_works(loaded: ToolHub):
    problems = [p for p in loaded.problems() if p.pack == "unknown_hook"]
    assert [(p.kind, p.item) for p in problems] == [("unknown-hook", "toolpalette_register_tool")]
    assert "did you mean toolpalette_register_tools?" in problems[0].reason
    assert loaded.catalog().has_tool("spelled_right")
    loaded.pm.check_pending()  # the unknown implementation was never registered


def test_an_implementation_with_unknown_arguments_fails_its_pack(loaded: ToolHub):
    (problem,) = [p for p in loaded.problems() if p.pack == "bad_args"]
    assert problem.kind == "hook"
    assert "workspace" in problem.reason
    assert "bad_args" not in loaded.loaded_packs()


def test_an_incompatible_pack_is_refused_before_import(loaded: ToolHub):
    (problem,) = [p for p in loaded.problems() if p.pack == "incompatible"]
    assert problem.kind == "incompatible"
    assert ">=99" in problem.reason
    assert "tp_testpack_incompatible.hooks" not in sys.modules
    (info,) = [p for p in loaded.plugins() if p.name == "incompatible"]
    assert (info.status, info.imported) == ("incompatible", False)


def test_plugins_report_hooks_and_status(loaded: ToolHub):
    infos = {p.name: p for p in loaded.plugins()}
    assert infos["healthy"].hooks == ("toolpalette_register_tools",)
    assert infos["healthy"].distribution == "toolpalette-testpack-healthy"
    assert infos["healthy"].version == "0.1.0"
    assert infos["healthy"].module == "tp_testpack_healthy.hooks"
    assert infos["healthy"].imported
    assert infos["broken_import"].status == "failed"
    assert not infos["broken_import"].imported


# -- environment switches -------------------------------------------------------------

CATALOG = """
import json, sys
from toolpalette import ToolHub
hub = ToolHub()
catalog = hub.catalog()
print(json.dumps({
    "tools": catalog.tool_names(),
    "plugins": {p.name: p.status for p in hub.plugins()},
    "problems": [[p.kind, p.pack] for p in hub.problems()],
    "side_effect_imported": "tp_testpack_side_effect.hooks" in sys.modules,
}))
"""


def test_blocked_packs_are_never_imported(tmp_path: Path):
    sentinel = tmp_path / "imported.txt"
    found = json_of(
        CATALOG, TOOLPALETTE_BLOCK_PLUGINS="side_effect", TP_TESTPACK_SENTINEL=str(sentinel)
    )
    assert isinstance(found, dict)
    assert not sentinel.exists()
    assert found["side_effect_imported"] is False
    assert found["plugins"]["side_effect"] == "blocked"
    assert ["blocked", "side_effect"] in found["problems"]
    assert "side_tool" not in found["tools"]


def test_an_unblocked_side_effect_pack_does_leave_its_trace(tmp_path: Path):
    sentinel = tmp_path / "imported.txt"
    found = json_of(CATALOG, TP_TESTPACK_SENTINEL=str(sentinel))
    assert isinstance(found, dict)
    assert sentinel.read_text(encoding="utf-8") == "imported"
    assert "side_tool" in found["tools"]


def test_only_the_listed_packs_are_used():
    found = json_of(CATALOG, TOOLPALETTE_PLUGINS="healthy, twice")
    assert isinstance(found, dict)
    assert found["tools"] == ["counter", "echo", "twice_tool", "upper"]
    assert found["plugins"]["alpha"] == "disabled"
    assert found["problems"] == []


def test_autoload_can_be_disabled_from_the_environment():
    found = json_of(CATALOG, TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD="1")
    assert found == {"tools": [], "plugins": {}, "problems": [], "side_effect_imported": False}


def test_listed_packs_still_load_when_autoload_is_disabled():
    found = json_of(CATALOG, TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD="1", TOOLPALETTE_PLUGINS="healthy")
    assert isinstance(found, dict)
    assert found["tools"] == ["counter", "echo", "upper"]


def test_tracing_logs_hook_calls():
    done = run_python(CATALOG, TOOLPALETTE_PLUGINS="healthy", TOOLPALETTE_TRACE_PLUGINS="1")
    assert done.returncode == 0, done.stderr
    assert "toolpalette trace: call toolpalette_register_tools on healthy" in done.stderr


def test_autoload_false_ignores_installed_packs():
    hub = ToolHub(autoload=False)
    assert hub.plugins() == []
    assert len(hub.catalog()) == 0


def test_toolpalette_version_is_the_installed_one():
    assert toolpalette.__version__ == "0.1.0"


def test_a_listing_reports_the_packs_as_the_catalog_does(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLPALETTE_NO_CACHE", "1")  # a listing that imports the packs
    listed = ToolHub()
    listing = listed.listing()
    built = ToolHub()
    built.catalog()

    def problems(found: Iterable[Problem]) -> list[tuple[str, str, str]]:
        # Only the catalog builds schemas, so only it reports a schema that cannot be built.
        kept = [p for p in found if p.kind != "invalid-tool"]
        return sorted((p.kind, p.pack or "", p.item or "") for p in kept)

    assert problems(listing.problems) == problems(built.problems())
    # The listing's packs join its hub's plugin manager as the catalog's did.
    assert [(p.name, p.status, p.hooks) for p in listed.plugins()] == [
        (p.name, p.status, p.hooks) for p in built.plugins()
    ]
    assert listed.pm.get_plugin("twice") is built.pm.get_plugin("twice") is not None
    assert listed.pm.get_plugin("twice_alias") is None
