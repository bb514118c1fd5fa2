"""The ToolHub with plugins added in code and with fake entry points (no installs).

The same behaviour against real installed distributions is in
``tests/integration/test_hub_dists.py``.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
import toolpalette._plugins.catalog as catalog_module
from toolpalette import ToolCollisionError, ToolHub, hookimpl, tool
from toolpalette._plugins.discovery import PLUGIN_GROUP, EntryPointInfo
from toolpalette._plugins.packs import Pack
from toolpalette.testing import plugin_of


@tool(read_only=True)
def search() -> str:
    """Search, the first way."""
    return "first"


@tool(name="search")
def other_search() -> str:
    """Search, another way."""
    return "second"


@tool(read_only=True)
def shared() -> str:
    """A tool two packs both return."""
    return "shared"


@pytest.fixture(autouse=True)
def _no_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PLUGINS", "BLOCK_PLUGINS", "DISABLE_PLUGIN_AUTOLOAD", "TRACE_PLUGINS"):
        monkeypatch.delenv(f"TOOLPALETTE_{name}", raising=False)


def hub_with(*plugins: tuple[str, object], **options: Any) -> ToolHub:
    hub = ToolHub(autoload=False, config={}, **options)
    for name, plugin in plugins:
        hub.add_plugin(plugin, name=name)
    return hub


# -- plugins added in code ------------------------------------------------------------


def test_an_empty_hub():
    hub = ToolHub(autoload=False, config={})
    assert len(hub.catalog()) == 0
    assert (hub.plugins(), hub.problems(), hub.loaded_packs()) == ([], [], [])


def test_added_plugins_join_the_catalog_with_their_pack_name():
    hub = hub_with(("a", plugin_of(search)))
    provider = hub.catalog().get_provider("search")
    assert provider.origin is not None
    assert (provider.origin.pack, provider.origin.distribution) == ("a", None)
    assert hub.loaded_packs() == ["a"]


def test_a_name_cannot_be_added_twice():
    hub = hub_with(("a", plugin_of(search)))
    with pytest.raises(ValueError, match="already exists"):
        hub.add_plugin(plugin_of(shared), name="a")


def test_a_module_plugin_is_named_after_the_module():
    module = types.ModuleType("my_host_tools")

    @hookimpl
    def toolpalette_register_tools() -> Any:
        return [shared]

    module.toolpalette_register_tools = toolpalette_register_tools  # type: ignore[attr-defined]
    hub = ToolHub(autoload=False, config={})
    assert hub.add_plugin(module) == "my_host_tools"
    assert hub.providers_for_package("my_host_tools")[0].name == "shared"


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_a_collision_offers_neither_tool_whatever_the_order(order: tuple[str, str]):
    plugins = {"a": plugin_of(search, shared), "b": plugin_of(other_search, shared)}
    hub = hub_with(*((name, plugins[name]) for name in order))
    catalog = hub.catalog()
    assert catalog.tool_names() == ["shared"]
    assert catalog.get_provider("shared").origin.pack == "a"  # type: ignore[union-attr]
    (problem,) = hub.problems()
    assert (problem.kind, problem.pack, problem.item) == ("collision", "a, b", "search")
    assert "in pack 'a'" in problem.reason
    assert "in pack 'b'" in problem.reason


def test_a_later_collision_removes_the_tool_from_an_existing_catalog():
    hub = hub_with(("a", plugin_of(search)))
    catalog = hub.catalog()
    assert catalog.has_tool("search")
    hub.add_plugin(plugin_of(other_search), name="b")
    assert hub.catalog() is catalog
    assert not catalog.has_tool("search")


def test_strict_raises_for_the_first_collision_and_counts_the_rest():
    @tool(name="zeta")
    def zeta_one() -> None:
        """Zeta one."""

    @tool(name="zeta")
    def zeta_two() -> None:
        """Zeta two."""

    hub = hub_with(("a", plugin_of(search, zeta_one)), ("b", plugin_of(other_search, zeta_two)))
    with pytest.raises(ToolCollisionError) as caught:
        hub.catalog(strict=True)
    assert caught.value.tool_name == "search"
    assert "1 more collision" in caught.value.hint


def test_prefix_and_rename_resolve_collisions_explicitly():
    plugins = (("a", plugin_of(search)), ("b", plugin_of(other_search)))
    assert hub_with(*plugins, prefix={"b": "b_"}).catalog().tool_names() == ["b_search", "search"]
    renamed = hub_with(*plugins, rename={"a.search": "a_search"}).catalog()
    assert renamed.tool_names() == ["a_search", "search"]
    assert renamed.get_provider("a_search").origin.pack == "a"  # type: ignore[union-attr]


def test_a_prefix_that_makes_a_name_too_long_is_a_problem():
    hub = hub_with(("a", plugin_of(search)), prefix={"a": "p" * 60})
    assert len(hub.catalog()) == 0
    assert [(p.kind, p.item) for p in hub.problems()] == [("invalid-tool", "search")]


def test_the_version_grows_when_tools_join():
    hub = hub_with()
    before = hub.version
    hub.add_plugin(plugin_of(search), name="a")
    assert hub.version > before


def test_the_same_object_under_two_names_is_registered_once():
    plugin = plugin_of(shared)
    hub = hub_with(("b", plugin), ("a", plugin))
    assert hub.catalog().tool_names() == ["shared"]
    assert hub.catalog().get_provider("shared").origin.pack == "a"  # type: ignore[union-attr]
    assert hub.problems() == []


def test_hub_pm_hook_calls_the_host_hooks():
    seen: list[Any] = []

    class Host:
        @hookimpl
        def toolpalette_grant(self, record):
            seen.append(record)

    hub = hub_with(("host", Host()))
    hub.pm.hook.toolpalette_grant(record="r")
    assert seen == ["r"]
    assert not hasattr(hub, "hook")  # one spelling: hub.pm.hook


# -- fake entry points ----------------------------------------------------------------


class FakeDist:
    def __init__(self, requires: list[str]) -> None:
        self.requires = requires


class FakeEntryPoint:
    def __init__(self, target: Any, requires: list[str]) -> None:
        self.target = target
        self.dist = FakeDist(requires)
        self.loads = 0

    def load(self) -> Any:
        self.loads += 1
        if isinstance(self.target, BaseException):
            raise self.target
        return self.target


def fake_pack(
    name: str,
    target: Any,
    *,
    module: str | None = None,
    dist: str | None = None,
    requires: tuple[str, ...] = ("toolpalette",),
) -> EntryPointInfo:
    entry_point = FakeEntryPoint(target, list(requires))
    return EntryPointInfo(
        PLUGIN_GROUP,
        name,
        module or f"pkg_{name}.hooks",
        dist or f"dist-{name}",
        "1.0",
        entry_point,
    )


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> list[EntryPointInfo]:
    packs: list[EntryPointInfo] = []

    def scan(group: str, installed: object = None) -> list[Pack]:
        assert group == PLUGIN_GROUP
        ordered = sorted(packs, key=lambda i: i.name)
        return [Pack(info.name, info.module, info=info) for info in ordered]

    monkeypatch.setattr(catalog_module, "scan", scan)
    return packs


def loads(info: EntryPointInfo) -> int:
    return int(info.entry_point.loads)


def test_construction_imports_nothing(installed: list[EntryPointInfo]):
    installed.append(fake_pack("a", plugin_of(search)))
    hub = ToolHub(config={})
    assert [p.status for p in hub.plugins()] == ["not-loaded"]
    assert loads(installed[0]) == 0


def test_selection_imports_only_the_packs_in_that_package(installed: list[EntryPointInfo]):
    installed += [
        fake_pack("a", plugin_of(search), module="pkg.hooks"),
        fake_pack("b", plugin_of(shared), module="pkg2.hooks"),
        fake_pack("c", plugin_of(shared), module="pkg"),
    ]
    hub = ToolHub(config={})
    assert sorted(p.name for p in hub.providers_for_package("pkg")) == ["search", "shared"]
    assert [loads(i) for i in installed] == [1, 0, 1]
    assert hub.loaded_packs() == ["a", "c"]


def test_selection_by_distribution_normalises_the_name(installed: list[EntryPointInfo]):
    installed += [
        fake_pack("a", plugin_of(search), dist="My.Tools"),
        fake_pack("b", plugin_of(shared)),
    ]
    hub = ToolHub(config={})
    assert [p.name for p in hub.providers_for_distribution("my_tools")] == ["search"]
    assert [loads(i) for i in installed] == [1, 0]


def test_packs_load_once(installed: list[EntryPointInfo]):
    installed.append(fake_pack("a", plugin_of(search)))
    hub = ToolHub(config={})
    hub.providers_for_pack("a")
    hub.catalog()
    hub.catalog()
    assert loads(installed[0]) == 1


def test_an_incompatible_pack_is_never_loaded(installed: list[EntryPointInfo]):
    installed.append(fake_pack("a", plugin_of(search), requires=("toolpalette>=99",)))
    hub = ToolHub(config={})
    assert len(hub.catalog()) == 0
    assert loads(installed[0]) == 0
    (problem,) = hub.problems()
    assert (problem.kind, problem.pack, problem.distribution) == ("incompatible", "a", "dist-a 1.0")


def test_an_import_error_is_a_problem_and_the_rest_loads(installed: list[EntryPointInfo]):
    installed += [
        fake_pack("a", ImportError("cannot import name 'x'")),
        fake_pack("b", plugin_of(shared)),
    ]
    hub = ToolHub(config={})
    assert hub.catalog().tool_names() == ["shared"]
    (problem,) = hub.problems()
    assert (problem.kind, problem.pack) == ("import", "a")
    assert "ImportError: cannot import name 'x'" in problem.reason


def test_keyboard_interrupt_is_not_swallowed(installed: list[EntryPointInfo]):
    installed.append(fake_pack("a", KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        ToolHub(config={}).catalog()


def test_two_distributions_declaring_one_pack_name_load_neither(installed: list[EntryPointInfo]):
    installed += [
        fake_pack("a", plugin_of(search), dist="one"),
        fake_pack("a", plugin_of(other_search), dist="two"),
    ]
    hub = ToolHub(config={})
    assert len(hub.catalog()) == 0
    (problem,) = hub.problems()
    assert problem.kind == "collision"
    assert "one 1.0" in problem.reason
    assert "two 1.0" in problem.reason
    assert [loads(i) for i in installed] == [0, 0]


def test_block_only_and_disable_switches(installed: list[EntryPointInfo], monkeypatch):
    installed += [fake_pack("a", plugin_of(search)), fake_pack("b", plugin_of(shared))]
    monkeypatch.setenv("TOOLPALETTE_BLOCK_PLUGINS", "a")
    hub = ToolHub(config={})
    assert hub.catalog().tool_names() == ["shared"]
    assert loads(installed[0]) == 0
    assert [(p.kind, p.pack) for p in hub.problems()] == [("blocked", "a")]
    monkeypatch.delenv("TOOLPALETTE_BLOCK_PLUGINS")

    monkeypatch.setenv("TOOLPALETTE_PLUGINS", "a")
    hub = ToolHub(config={})
    assert hub.catalog().tool_names() == ["search"]
    assert {p.name: p.status for p in hub.plugins()} == {"a": "loaded", "b": "disabled"}

    monkeypatch.setenv("TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert [p.name for p in ToolHub(config={}).plugins()] == ["a", "b"]  # PLUGINS still wins
    monkeypatch.delenv("TOOLPALETTE_PLUGINS")
    assert ToolHub(config={}).plugins() == []


def test_plugins_can_load_everything_first(installed: list[EntryPointInfo]):
    installed.append(fake_pack("a", plugin_of(search)))
    hub = ToolHub(config={})
    (info,) = hub.plugins(load=True)
    assert (info.name, info.distribution, info.version, info.module) == (
        "a",
        "dist-a",
        "1.0",
        "pkg_a.hooks",
    )
    assert (info.hooks, info.imported, info.status) == (
        ("toolpalette_register_tools",),
        True,
        "loaded",
    )


def test_pack_config_comes_from_the_configuration():
    hub = ToolHub(autoload=False, config={"packs": {"files": {"root": "/srv"}}})
    assert hub.pack_config("files") == {"root": "/srv"}
    assert hub.pack_config("other") == {}


class UnreadableDist:
    @property
    def requires(self) -> list[str]:
        raise OSError("METADATA vanished")


def test_unreadable_metadata_fails_the_pack_before_import(installed: list[EntryPointInfo]):
    info = fake_pack("a", plugin_of(search))
    info.entry_point.dist = UnreadableDist()
    installed.append(info)
    hub = ToolHub(config={})
    assert len(hub.catalog()) == 0
    assert loads(info) == 0
    (problem,) = hub.problems()
    assert problem.kind == "import"
    assert "OSError: METADATA vanished" in problem.reason
    assert [p.status for p in hub.plugins()] == ["failed"]


# -- schemas are built when needed, and a broken definition is still reported ---------

REFINED: list[str] = []


def _broken_refiner(schema: dict[str, Any]) -> None:
    REFINED.append("called")
    raise ValueError("this refiner is broken on purpose")


@tool(read_only=True, refine_schema=_broken_refiner)
def broken_schema(text: str) -> str:
    """A tool whose schema cannot be built."""
    return text


def test_a_listing_builds_no_schema_and_the_catalog_reports_a_broken_one(
    capsys: pytest.CaptureFixture[str],
):
    from toolpalette import Thinker, ToolDefinitionError, ToolSelector
    from toolpalette.errors import InvalidToolSchemaError
    from toolpalette.testing import run_cli

    REFINED.clear()
    hub = hub_with(("a", plugin_of(search, broken_schema)))
    listing = hub.listing()
    assert [t.name for t in listing.tools] == ["broken_schema", "search"]
    assert REFINED == []  # names, descriptions and flags only: no schema was built

    class Careless(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool(broken_schema)

    with pytest.raises((InvalidToolSchemaError, ToolDefinitionError)):
        hub.bind(Careless)  # reported at bind time, before any call
    assert REFINED  # bind built the schema

    assert run_cli(["check"], hub=hub) == 1
    assert "broken_schema" in capsys.readouterr().out
    assert hub.catalog().tool_names() == ["search"]
    (problem,) = [p for p in hub.problems() if p.item == "broken_schema"]
    assert problem.kind == "invalid-tool"
