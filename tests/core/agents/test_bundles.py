"""Bundles: a pack deferred whole is one catalog entry, found, requested and granted as one.

``ToolSelector().package(x, deferred="bundle")`` keeps the package's tools out of the
first offer, as ``deferred=True`` does, and shows them as one entry (its name, the
pack's ``TOOLPALETTE_BUNDLE`` or its distribution's summary); a search that finds it
grants each of its tools through admission, in every ``tool_search`` mode.
"""

from __future__ import annotations

import contextlib
import sqlite3
import types
from pathlib import Path
from typing import Any

import pytest
from toolpalette import Decision, Thinker, ToolCollisionError, ToolHub, ToolPolicy, ToolSelector
from toolpalette import hookimpl as hookimpl_
from toolpalette.testing import FakeTool


def pack(module_name: str, tools: list[FakeTool], described: str | None = None) -> Any:
    """A hooks module made in code, holding ``tools`` (and a bundle text, if given)."""
    module = types.ModuleType(module_name)

    @hookimpl_
    def toolpalette_register_tools() -> list[Any]:
        return list(tools)

    module.toolpalette_register_tools = toolpalette_register_tools  # type: ignore[attr-defined]
    if described is not None:
        module.TOOLPALETTE_BUNDLE = described  # type: ignore[attr-defined]
    return module


def tool(name: str, description: str, *, read_only: bool = True) -> FakeTool:
    return FakeTool(name, description=description, read_only=read_only, result={"ran": name})


BILLING = [
    tool("create_invoice", "Create an invoice for a customer."),
    tool("send_invoice", "Send an invoice by e-mail.", read_only=False),
    tool("refund_payment", "Refund a payment.", read_only=False),
]
WEATHER = [
    tool("forecast", "The weather forecast of a city."),
    tool("rainfall", "How much rain fell in a city."),
]


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False)
    hub.add_plugin(pack("acme_billing", BILLING, "Invoices and payments: bill customers."))
    hub.add_plugin(pack("acme_weather", WEATHER))
    return hub


def bundled(mode: str, **attrs: Any) -> type[Thinker]:
    def declare(cls: type[Thinker]) -> ToolSelector:
        return (
            ToolSelector()
            .package("acme_billing", deferred="bundle")
            .package("acme_weather", deferred="bundle")
        )

    namespace = {"tool_search": mode, "declare_compatible_tools": classmethod(declare), **attrs}
    return type(f"Bundled_{mode}", (Thinker,), namespace)


def test_a_bundle_is_one_entry_with_the_packs_text_or_its_tools(hub: ToolHub):
    resolved = bundled("search").declare_compatible_tools().resolve(hub)
    assert [p.name for p in resolved.deferred] == [t.name for t in [*BILLING, *WEATHER]]
    billing, weather = resolved.bundles
    assert (billing.name, billing.tools) == ("acme_billing", tuple(t.name for t in BILLING))
    assert billing.description == "Invoices and payments: bill customers."
    # No text declared and no distribution: the bundle says which tools it holds.
    assert weather.description == "Tools of acme_weather: forecast, rainfall."


def test_a_tool_named_on_its_own_leaves_its_bundle(hub: ToolHub):
    selector = ToolSelector().package("acme_billing", deferred="bundle").tool("send_invoice")
    resolved = selector.resolve(hub)
    assert [p.name for p in resolved.offered] == ["send_invoice"]
    [billing] = resolved.bundles
    assert billing.tools == ("create_invoice", "refund_payment")


def test_only_whole_entries_are_bundles_and_names_do_not_collide(hub: ToolHub):
    with pytest.raises(ValueError, match="bundle"):
        ToolSelector().tool("forecast", deferred="bundle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bundle"):
        ToolSelector().package("acme_weather", deferred="yes")  # type: ignore[arg-type]
    hub.add_plugin(pack("acme", [tool("acme_weather", "A tool named as a bundle.")]))
    selector = ToolSelector().package("acme_weather", deferred="bundle").package("acme")
    with pytest.raises(ToolCollisionError):
        selector.resolve(hub)


def test_one_search_finds_a_bundle_and_grants_all_its_tools(hub: ToolHub):
    thinker = hub.bind(bundled("search"))
    assert thinker.begin_turn().tool_names == ("search_tools",)
    found = thinker.search("tool", "bill a customer for an invoice", 5)
    assert [b["name"] for b in found["bundles"]] == ["acme_billing"]
    assert found["bundles"][0]["tools"] == [t.name for t in BILLING]
    names = [t["name"] for t in found["tools"]]
    assert names == [t.name for t in BILLING]  # the bundle's tools, where it ranks
    assert {t["bundle"] for t in found["tools"]} == {"acme_billing"}
    assert "forecast" not in names
    granted = {r.name: r.reason for r in hub.grants() if r.decision == "granted"}
    assert granted == {t.name: "with the bundle acme_billing" for t in BILLING}
    turn = thinker.begin_turn()
    assert set(turn.tool_names) == {"search_tools", *names}


async def test_a_bundles_tools_are_callable_in_the_turn_that_found_it(hub: ToolHub):
    thinker = hub.bind(bundled("search"))
    thinker.begin_turn()
    thinker.search("tool", "rain in a city", 5)
    result = await thinker.call("rainfall", {})
    assert not result.is_error, result.content
    assert result.content[0]["text"] == '{"ran":"rainfall"}'


def test_the_policy_decides_each_tool_of_a_bundle(hub: ToolHub):
    class NoRefunds(ToolPolicy):
        def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
            if name == "refund_payment":
                return Decision.DENY
            return Decision.ASK if name == "send_invoice" else Decision.ALLOW

    thinker = hub.bind(bundled("search"), policy=NoRefunds())
    thinker.begin_turn()
    found = thinker.search("tool", "invoice", 5)
    approval = {t["name"]: t.get("approval") for t in found["tools"]}
    assert approval == {"create_invoice": None, "send_invoice": "required"}
    decided = {r.name: r.decision for r in hub.grants()}
    assert decided["refund_payment"] == "refused"


def test_a_read_only_thinker_gets_only_a_bundles_read_only_tools(hub: ToolHub):
    thinker = hub.bind(bundled("search", read_only=True))
    thinker.begin_turn()
    found = thinker.search("tool", "invoice payment", 5)
    assert [t["name"] for t in found["tools"]] == ["create_invoice"]


def test_request_tools_lists_a_bundle_once_and_grants_its_tools(hub: ToolHub):
    thinker = hub.bind(bundled("enum"))
    turn = thinker.begin_turn()
    [request] = turn.tools
    listed = [
        entry["enum"][0] for entry in request.input_schema["properties"]["names"]["items"]["anyOf"]
    ]
    assert listed == ["acme_billing", "acme_weather"]
    outcome = thinker.admit("tool", ["acme_weather"])
    assert outcome["granted"] == ["forecast", "rainfall"]
    assert outcome["bundles"] == {"acme_weather": ["forecast", "rainfall"]}
    assert set(thinker.begin_turn().tool_names) == {"request_tools", "forecast", "rainfall"}


def test_the_auto_mode_counts_a_bundle_as_one_entry(hub: ToolHub):
    big = [tool(f"step_{i:02d}", f"Step {i} of a long job.") for i in range(40)]
    hub.add_plugin(pack("acme_jobs", big))

    class Auto(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().package("acme_jobs", deferred="bundle")

    assert Auto.tool_search == "auto"
    assert hub.bind(Auto).begin_turn().tool_names == ("request_tools",)


def test_a_native_turn_exports_bundles_as_openai_namespaces(hub: ToolHub):
    turn = hub.bind(bundled("native")).begin_turn()
    responses = turn.schemas("openai_responses")
    assert responses[0] == {"type": "tool_search"}
    spaces = {item["name"]: item for item in responses[1:]}
    assert [item["type"] for item in spaces.values()] == ["namespace", "namespace"]
    billing = spaces["acme_billing"]
    assert billing["description"] == "Invoices and payments: bill customers."
    assert [f["name"] for f in billing["tools"]] == [t.name for t in BILLING]
    assert all(f["defer_loading"] is True for f in billing["tools"])
    assert "defer_loading" not in billing  # on the functions, not on the namespace
    # Anthropic has no namespaces: each tool is deferred on its own.
    anthropic = turn.schemas("anthropic")
    assert [t["name"] for t in anthropic[1:]] == [t.name for t in [*BILLING, *WEATHER]]


def test_installed_packs_deferred_as_bundles_read_their_distributions_summary(tmp_path: Path):
    database = tmp_path / "shop.db"
    with contextlib.closing(sqlite3.connect(database)) as db, db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
    hub = ToolHub(config={"packs": {"sqlite": {"database": str(database)}}})

    class TwoPacks(Thinker):
        tool_search = "search"

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return (
                ToolSelector()
                .package("toolpalette_files", deferred="bundle")
                .package("toolpalette_sqlite", deferred="bundle")
            )

    thinker = hub.bind(TwoPacks)
    thinker.begin_turn()
    found = thinker.search("tool", "run a read-only SQL query on the database", 1)
    [sqlite] = found["bundles"]
    assert sqlite["name"] == "toolpalette_sqlite"
    assert "SQLite" in sqlite["description"]  # the distribution's summary
    assert "query" in sqlite["tools"]
    assert "read_file" not in sqlite["tools"]
    assert set(thinker.begin_turn().tool_names) == {"search_tools", *sqlite["tools"]}


def test_a_packs_bundle_text_that_is_not_usable_is_not_read():
    hub = ToolHub(autoload=False)
    odd = pack("acme_odd", [tool("odd_one", "An odd tool.")])
    odd.TOOLPALETTE_BUNDLE = 42
    spaced = pack("acme_spaced", [tool("spaced_one", "A spaced tool.")], "Two\nlines\tand  gaps.")
    hub.add_plugin(odd)
    hub.add_plugin(spaced)
    selector = (
        ToolSelector()
        .package("acme_odd", deferred="bundle")
        .package("acme_spaced", deferred="bundle")
    )
    first, second = selector.resolve(hub).bundles
    assert first.description == "Tools of acme_odd: odd_one."
    assert second.description == "Two lines and gaps."  # one line in the catalog


def test_a_bundle_of_a_dotted_package_has_a_tool_name():
    hub = ToolHub(autoload=False)
    hub.add_plugin(pack("acme.deep.tools", [tool("deep_one", "A deep tool.")]))
    [bundle] = ToolSelector().package("acme.deep", deferred="bundle").resolve(hub).bundles
    assert bundle.name == "acme_deep"
