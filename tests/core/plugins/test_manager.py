"""The plugin manager: prefix filter, unknown hooks, validation, tracing."""

from __future__ import annotations

import logging

import pluggy
import pytest
from toolpalette import ToolHub, hookimpl
from toolpalette._plugins.manager import ToolpaletteManager


@pytest.fixture
def pm() -> ToolpaletteManager:
    return ToolpaletteManager(trace=False)


class Good:
    @hookimpl
    def toolpalette_register_tools(self):
        return []

    @hookimpl
    def register_tools(self):  # marked, but without the prefix: not a hook implementation
        return []

    def toolpalette_register_skills(self):  # prefixed, but not marked
        return []


def test_only_marked_prefixed_attributes_are_implementations(pm: ToolpaletteManager):
    pm.register(Good(), name="good")
    assert pm.hooks_of("good") == ["toolpalette_register_tools"]
    assert not hasattr(pm.hook, "register_tools")
    assert pm.unknown_hooks("good") == ()


class Typo:
    @hookimpl
    def toolpalette_register_tool(self):
        return []

    @hookimpl
    def toolpalette_register_tools(self):
        return []


def test_an_unknown_hook_is_remembered_and_not_registered(pm: ToolpaletteManager):
    pm.register(Typo(), name="typo")
    assert pm.unknown_hooks("typo") == ("toolpalette_register_tool",)
    assert pm.hooks_of("typo") == ["toolpalette_register_tools"]
    assert not hasattr(pm.hook, "toolpalette_register_tool")
    pm.check_pending()


def test_unknown_hooks_are_forgotten_on_unregister(pm: ToolpaletteManager):
    plugin = Typo()
    pm.register(plugin, name="typo")
    pm.unregister(plugin)
    assert pm.unknown_hooks("typo") == ()


def test_the_suggestion_names_the_closest_hook():
    assert ToolpaletteManager.suggest("toolpalette_register_tool") == (
        "did you mean toolpalette_register_tools?"
    )
    assert "toolpalette_grant" in ToolpaletteManager.suggest("toolpalette_zzz_qqq_xxx_www")


class WrongArgs:
    @hookimpl
    def toolpalette_register_tools(self, workspace):
        return []


def test_an_implementation_with_unknown_arguments_is_refused_and_leaves_no_trace(
    pm: ToolpaletteManager,
):
    with pytest.raises(pluggy.PluginValidationError, match="workspace"):
        pm.register(WrongArgs(), name="wrong")
    assert pm.get_plugin("wrong") is None
    assert pm.hook.toolpalette_register_tools.get_hookimpls() == []


def test_impls_of_follows_pluggys_call_order(pm: ToolpaletteManager):
    class First:
        @hookimpl(tryfirst=True)
        def toolpalette_register_tools(self):
            return "first"

    class Second:
        @hookimpl
        def toolpalette_register_tools(self):
            return "second"

    pm.register(Second(), name="second")
    pm.register(First(), name="first")
    assert [i.plugin_name for i in pm.impls_of("toolpalette_register_tools", "first")] == ["first"]
    assert pm.hook.toolpalette_register_tools() == ["first", "second"]


def test_blocked_names_are_not_registered(pm: ToolpaletteManager):
    pm.set_blocked("good")
    assert pm.register(Good(), name="good") is None
    assert pm.hooks_of("good") == []


def test_tracing_logs_every_hook_call_the_hub_makes(caplog: pytest.LogCaptureFixture):
    hub = ToolHub(autoload=False, config={})
    with caplog.at_level(logging.DEBUG, logger="toolpalette.trace"):
        hub.add_plugin(Good(), name="good")
        hub.catalog()
    messages = [r.getMessage() for r in caplog.records if r.name == "toolpalette.trace"]
    assert messages == [
        "call toolpalette_register_tools on good",
        "toolpalette_register_tools returned []",
    ]


def test_tracing_follows_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLPALETTE_TRACE_PLUGINS", "1")
    assert ToolpaletteManager().tracing
    monkeypatch.setenv("TOOLPALETTE_TRACE_PLUGINS", "")
    assert not ToolpaletteManager().tracing


def test_impls_of_lists_a_plugins_own_implementations_in_pluggys_call_order(
    pm: ToolpaletteManager,
):
    class Several:
        @hookimpl(trylast=True)
        def toolpalette_register_tools(self):
            return "last"

        @hookimpl(specname="toolpalette_register_tools")
        def toolpalette_register_tools_plain(self):
            return "plain"

        @hookimpl(specname="toolpalette_register_tools", tryfirst=True)
        def toolpalette_register_tools_first(self):
            return "first"

    class Other:
        @hookimpl
        def toolpalette_register_tools(self):
            return "other"

    pm.register(Other(), name="before")
    pm.register(Several(), name="several")
    pm.register(Other(), name="after")
    own = [i.function() for i in pm.impls_of("toolpalette_register_tools", "several")]
    everyone = pm.hook.toolpalette_register_tools()
    assert own == [r for r in everyone if r != "other"] == ["first", "plain", "last"]
    assert pm.impls_of("toolpalette_register_skills", "several") == []


def test_get_name_is_by_identity_and_forgets_an_unregistered_plugin(pm: ToolpaletteManager):
    plugin, twin = Good(), Good()
    assert pm.register(plugin, name="good") == "good"
    assert (pm.get_name(plugin), pm.get_name(twin)) == ("good", None)
    pm.unregister(plugin)
    assert pm.get_name(plugin) is None
    assert pm.impls_of("toolpalette_register_tools", "good") == []
