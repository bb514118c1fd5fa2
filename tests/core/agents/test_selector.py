"""ToolSelector and SkillSelector: what a thinker declares, resolved against the hub."""

from __future__ import annotations

import logging
import types

import pytest
from pydantic import BaseModel
from toolpalette import (
    ClassToolProvider,
    FunctionToolProvider,
    ResolvedTools,
    Skill,
    SkillRegistry,
    SkillSelector,
    Thinker,
    Tool,
    ToolCollisionError,
    ToolHub,
    ToolSelector,
    hookimpl,
    tool,
)
from toolpalette.errors import ToolNotFoundError, ToolpaletteError


@tool(read_only=True)
def alpha() -> str:
    """Alpha."""
    return "a"


@tool(read_only=True)
def beta() -> str:
    """Beta."""
    return "b"


@tool
def gamma() -> str:
    """Gamma."""
    return "c"


@tool(name="alpha")
def other_alpha() -> str:
    """Another alpha."""
    return "A"


class EchoInput(BaseModel):
    text: str


@tool(read_only=True)
class Echo(Tool):
    """Echo the text back."""

    def run(self, input: EchoInput) -> str:
        return input.text


def module_plugin(module_name: str, *tools: object) -> types.ModuleType:
    """A hooks module as an installed pack would have, built in memory."""
    module = types.ModuleType(module_name)

    def toolpalette_register_tools() -> list[object]:
        return list(tools)

    module.toolpalette_register_tools = hookimpl(toolpalette_register_tools)  # type: ignore[attr-defined]
    return module


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(module_plugin("acme_tools.hooks", alpha, beta), name="acme")
    hub.add_plugin(module_plugin("acme_tools_extra.hooks", gamma), name="extra")
    hub.add_plugin(module_plugin("other.hooks", Echo), name="other")
    return hub


def names(providers: tuple[object, ...]) -> list[str]:
    return [p.name for p in providers]  # type: ignore[attr-defined]


# -- building ----------------------------------------------------------------------------


def test_methods_chain_and_record_entries() -> None:
    selector = ToolSelector()
    assert not selector
    assert selector.tool(alpha) is selector
    assert selector.package("acme_tools", deferred=True) is selector
    assert selector.distribution("acme-tools") is selector
    assert selector.provider(FunctionToolProvider(beta)) is selector
    assert selector
    text = repr(selector)
    assert "package='acme_tools' (deferred)" in text
    assert "distribution='acme-tools'" in text


def test_nothing_is_resolved_when_the_selector_is_built() -> None:
    ToolSelector().tool(object())  # a non-tool is only refused when resolved
    with pytest.raises(ToolpaletteError):
        ToolSelector().tool(object()).resolve(ToolHub(autoload=False, config={}))


# -- resolving -----------------------------------------------------------------------


def test_tools_and_providers_resolve_in_declaration_order(hub: ToolHub) -> None:
    custom = FunctionToolProvider(gamma)
    resolved = hub.resolve(ToolSelector().tool(beta).tool(Echo).provider(custom).tool(alpha))
    assert isinstance(resolved, ResolvedTools)
    assert names(resolved.offered) == ["beta", "echo", "gamma", "alpha"]
    assert resolved.deferred == ()
    assert isinstance(resolved.offered[1], ClassToolProvider)
    assert resolved.names == {"alpha", "beta", "gamma", "echo"}


def test_a_tool_from_a_pack_resolves_to_the_hubs_provider_with_its_origin(hub: ToolHub) -> None:
    hub.catalog()
    [provider] = hub.resolve(ToolSelector().tool(alpha)).offered
    assert provider.origin is not None
    assert provider.origin.pack == "acme"


def test_deferred_entries_are_kept_apart(hub: ToolHub) -> None:
    resolved = hub.resolve(ToolSelector().tool(alpha).tool(beta, deferred=True))
    assert (names(resolved.offered), names(resolved.deferred)) == (["alpha"], ["beta"])


def test_a_name_both_offered_and_deferred_is_offered(hub: ToolHub) -> None:
    for selector in (
        ToolSelector().tool(alpha, deferred=True).tool(alpha),
        ToolSelector().tool(alpha).tool(alpha, deferred=True),
    ):
        resolved = hub.resolve(selector)
        assert (names(resolved.offered), resolved.deferred) == (["alpha"], ())


def test_the_same_tool_twice_is_one_entry(hub: ToolHub) -> None:
    selector = (
        ToolSelector().tool(alpha).provider(FunctionToolProvider(alpha)).package("acme_tools")
    )
    assert names(hub.resolve(selector).offered) == ["alpha", "beta"]


def test_two_different_tools_under_one_name_collide(hub: ToolHub) -> None:
    with pytest.raises(ToolCollisionError) as caught:
        hub.resolve(ToolSelector().tool(alpha).tool(other_alpha, deferred=True))
    assert "alpha" in str(caught.value)


def test_a_package_selects_the_tools_whose_module_lies_in_it(hub: ToolHub) -> None:
    assert names(hub.resolve(ToolSelector().package("acme_tools")).offered) == ["alpha", "beta"]
    assert names(hub.resolve(ToolSelector().package("acme_tools.hooks")).offered) == [
        "alpha",
        "beta",
    ]
    # On dot boundaries: acme_tools does not select acme_tools_extra, acme selects neither.
    assert names(hub.resolve(ToolSelector().package("acme_tools_extra")).offered) == ["gamma"]
    assert hub.resolve(ToolSelector().package("acme")).offered == ()
    deferred = hub.resolve(ToolSelector().package("other", deferred=True))
    assert (deferred.offered, names(deferred.deferred)) == ((), ["echo"])


def test_an_unknown_package_or_distribution_selects_nothing(hub: ToolHub) -> None:
    resolved = hub.resolve(ToolSelector().package("nowhere").distribution("no-such-dist"))
    assert (resolved.offered, resolved.deferred) == ((), ())


def test_a_selector_resolves_against_the_hub_as_it_is_now(hub: ToolHub) -> None:
    selector = ToolSelector().package("late_pack")
    assert hub.resolve(selector).offered == ()
    hub.add_plugin(module_plugin("late_pack.hooks", gamma), name="late")
    assert names(hub.resolve(selector).offered) == ["gamma"]


def _installed(*packs: str) -> bool:
    hub = ToolHub(config={})
    return set(packs) <= {info.name for info in hub.plugins()}


@pytest.mark.skipif(
    not _installed("files", "sqlite"), reason="the first-party packs are not installed"
)
def test_installed_packs_resolve_by_distribution_and_package_importing_only_those(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("PLUGINS", "BLOCK_PLUGINS", "DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(f"TOOLPALETTE_{name}", raising=False)
    hub = ToolHub(config={})
    resolved = hub.resolve(ToolSelector().distribution("toolpalette-sqlite", deferred=True))
    assert "query" in names(resolved.deferred)
    assert hub.loaded_packs() == ["sqlite"]
    resolved = hub.resolve(ToolSelector().package("toolpalette_files"))
    assert "read_file" in names(resolved.offered)
    assert hub.loaded_packs() == ["files", "sqlite"]


# -- SkillSelector ------------------------------------------------------------------------


def _skill(bundle: str, name: str) -> Skill:
    return Skill(name, f"The {name} skill.", bundle=bundle, body=f"Do {name}.")


def test_skills_are_resolved_when_get_skills_is_called() -> None:
    registry = SkillRegistry()
    selector = SkillSelector().skill("io.example/later").prefix("io.example.more")
    assert selector.get_skills(registry) == []
    registry.add_skills(
        [
            _skill("io.example", "later"),
            _skill("io.example.more", "b"),
            _skill("io.example.more", "a"),
        ],
        pack="code",
        distribution=None,
    )
    assert [s.id for s in selector.get_skills(registry)] == [
        "io.example/later",
        "io.example.more/a",
        "io.example.more/b",
    ]


def test_missing_skill_ids_are_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    registry = SkillRegistry()
    registry.add_skills([_skill("io.example", "here")], pack="code", distribution=None)
    selector = SkillSelector().skill("io.example/gone").skill("io.example/here").prefix("io.none")
    with caplog.at_level(logging.WARNING, logger="toolpalette.skills"):
        found = selector.get_skills(registry)
    assert [s.id for s in found] == ["io.example/here"]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "io.example/gone" in logged
    assert "io.none" in logged


def test_a_thinker_declaring_a_missing_skill_still_binds(
    hub: ToolHub, caplog: pytest.LogCaptureFixture
) -> None:
    hub.skills().add_skills([_skill("io.example", "here")], pack="code", distribution=None)

    class Reader(Thinker):
        @classmethod
        def declare_skills(cls) -> SkillSelector:
            return SkillSelector().skill("io.example/gone").skill("io.example/here")

    with caplog.at_level(logging.WARNING, logger="toolpalette.skills"):
        reader = hub.bind(Reader)
    turn = reader.begin_turn()
    [request] = [p for p in turn.tools if p.name == "request_skill"]
    members = request.input_schema["properties"]["skills"]["items"]["anyOf"]
    assert [m["enum"][0] for m in members] == ["io.example/here"]
    assert "io.example/gone" in caplog.text


def test_a_skill_selector_built_before_the_skill_was_added_sees_it_at_bind(hub: ToolHub) -> None:
    class Reader(Thinker):
        @classmethod
        def declare_skills(cls) -> SkillSelector:
            return SkillSelector().prefix("io.example")

    selector = Reader.declare_skills()
    hub.skills().add_skills([_skill("io.example", "new")], pack="code", distribution=None)
    assert [s.id for s in selector.get_skills(hub.skills())] == ["io.example/new"]
    assert "request_skill" in hub.bind(Reader).begin_turn().tool_names


# -- by name, exclusions and precedence ----------------------------------------------


def test_a_tool_selected_by_name_resolves_to_its_packs_provider(hub: ToolHub) -> None:
    resolved = hub.resolve(ToolSelector().tool("gamma").tool("echo", deferred=True))
    assert (names(resolved.offered), names(resolved.deferred)) == (["gamma"], ["echo"])
    assert resolved.offered[0].origin is not None
    assert resolved.offered[0].origin.pack == "extra"


def test_an_unknown_name_raises_naming_what_is_available(hub: ToolHub) -> None:
    with pytest.raises(ToolNotFoundError) as caught:
        hub.resolve(ToolSelector().tool("no_such_tool"))
    assert caught.value.tool_name == "no_such_tool"
    assert caught.value.available == ("alpha", "beta", "echo", "gamma")


def test_a_renamed_tool_is_selected_by_its_new_name() -> None:
    hub = ToolHub(autoload=False, config={"rename": {"alpha": "first"}})
    hub.add_plugin(module_plugin("acme_tools.hooks", alpha, beta), name="acme")
    [provider] = hub.resolve(ToolSelector().tool("first")).offered
    assert provider.name == "first"
    with pytest.raises(ToolNotFoundError):
        hub.resolve(ToolSelector().tool("alpha"))


@pytest.mark.parametrize("target", ["beta", beta, FunctionToolProvider(beta)])
def test_exclude_wins_over_every_entry_in_any_order(hub: ToolHub, target: object) -> None:
    for selector in (
        ToolSelector().package("acme_tools").tool(beta).exclude(target),
        ToolSelector().exclude(target).tool("beta").package("acme_tools", deferred=True),
    ):
        resolved = hub.resolve(selector)
        assert "beta" not in resolved.names
        assert "alpha" in resolved.names


def test_an_excluded_name_spares_a_collision_it_would_cause(hub: ToolHub) -> None:
    resolved = hub.resolve(ToolSelector().tool(alpha).tool(other_alpha).exclude("alpha"))
    assert resolved.names == frozenset()


def test_exclude_refuses_a_non_tool_at_once() -> None:
    with pytest.raises(ToolpaletteError):
        ToolSelector().exclude(object())


def test_one_tool_of_a_selected_package_can_be_deferred_in_any_order(hub: ToolHub) -> None:
    for selector in (
        ToolSelector().package("acme_tools").tool(beta, deferred=True),
        ToolSelector().tool("beta", deferred=True).package("acme_tools"),
    ):
        resolved = hub.resolve(selector)
        assert (names(resolved.offered), names(resolved.deferred)) == (["alpha"], ["beta"])


def test_one_tool_of_a_deferred_package_can_be_offered(hub: ToolHub) -> None:
    resolved = hub.resolve(ToolSelector().package("acme_tools", deferred=True).tool(alpha))
    assert (names(resolved.offered), names(resolved.deferred)) == (["alpha"], ["beta"])


def test_the_repr_shows_exclusions() -> None:
    assert "exclude='beta'" in repr(ToolSelector().package("acme_tools").exclude("beta"))
