"""A tool the host renames or prefixes keeps everything but its name, in every format.

Regression: the renaming wrapper forwarded eleven of the provider's fifteen properties
by hand, so a renamed tool lost ``destructive``, ``idempotent`` and ``open_world`` (and
a declared display name): a read-safe tool's MCP annotations said destructive. Renaming
is now the tool's record with the name replaced; these tests go through the host's
configuration and a thinker's turn, as a host does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from toolpalette import Thinker, ToolHub, ToolSelector, tool
from toolpalette.testing import FORMATS, as_provider, plugin_of

FLAGS = ("read_only", "destructive", "idempotent", "open_world")
COMBINATIONS = [
    dict(zip(FLAGS, values, strict=True)) for values in itertools.product((False, True), repeat=4)
]


class Found(pydantic.BaseModel):
    """What each tool returns: an object, so MCP publishes it as the output schema."""

    hits: int


def _make(flags: dict[str, bool], index: int) -> Callable[..., Found]:
    code = "".join("1" if flags[f] else "0" for f in FLAGS)

    def search(query: str, limit: int = 3) -> Found:
        return Found(hits=limit)

    search.__doc__ = f"Search for a query ({code})."
    return tool(  # type: ignore[no-any-return]
        name=f"search_{code}",
        # Half declare a display name (kept under the new name), half derive it.
        display_name=f"Finder {code}" if index % 2 else None,
        action_verb="Searching",
        weight=2.5 + index,
        metadata={"code": code},
        concurrency_safe=index % 3 == 0,
        timeout=7 + index,
        output_cap=4096 + index,
        guidance=f"Search {code} before you answer.",
        **flags,
    )(search)


TOOLS = [_make(flags, i) for i, flags in enumerate(COMBINATIONS)]
CODES = [as_provider(t).name.removeprefix("search_") for t in TOOLS]
# A rename for half the tools, the pack's prefix for the rest (a rename wins over it).
RENAME = {f"pack.search_{code}": f"found_{code}" for code in CODES[::2]}
NEW_NAMES = [RENAME.get(f"pack.search_{code}", f"p_search_{code}") for code in CODES]


class Searcher(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector()
        for fn in TOOLS:
            selector.tool(fn)
        return selector


def _turn(**config: Any) -> Any:
    hub = ToolHub(autoload=False, config={}, **config)
    hub.add_plugin(plugin_of(*TOOLS), name="pack")
    return hub.bind(Searcher).begin_turn()


def _named(fmt: str, entry: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The entry's name, and the entry without its name (and MCP's derived title)."""
    body = {k: v for k, v in entry.items() if k != "name"}
    if fmt == "openai_chat":
        body["function"] = {k: v for k, v in entry["function"].items() if k != "name"}
        return entry["function"]["name"], body
    return entry["name"], body


ORIGINAL = _turn()
RENAMED = _turn(rename=RENAME, prefix={"pack": "p_"})


def test_the_host_configuration_renames_every_tool() -> None:
    assert ORIGINAL.tool_names == tuple(f"search_{code}" for code in CODES)
    assert RENAMED.tool_names == tuple(NEW_NAMES)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_keeps_everything_but_the_name(fmt: str) -> None:
    for before, after, new in zip(
        ORIGINAL.schemas(fmt), RENAMED.schemas(fmt), NEW_NAMES, strict=True
    ):
        old_name, old_body = _named(fmt, before)
        name, body = _named(fmt, after)
        assert name == new
        if fmt == "mcp" and not old_body["title"].startswith("Finder "):
            # A derived display name follows the new name; a declared one stays.
            assert (
                body["title"] == body["annotations"]["title"] == new.replace("_", " ").capitalize()
            )
            body["title"] = body["annotations"]["title"] = old_body["title"]
        assert body == old_body, f"{old_name} renamed {new} in {fmt}"


@pytest.mark.parametrize(("flags", "name"), list(zip(COMBINATIONS, NEW_NAMES, strict=True)))
def test_the_mcp_annotations_of_a_renamed_tool_are_its_own(
    flags: dict[str, bool], name: str
) -> None:
    [entry] = [e for e in RENAMED.schemas("mcp") if e["name"] == name]
    annotations = entry["annotations"]
    assert annotations["readOnlyHint"] is flags["read_only"]
    assert annotations["openWorldHint"] is flags["open_world"]
    if flags["read_only"]:  # the two hints mean nothing for a tool that changes nothing
        assert "destructiveHint" not in annotations
        assert "idempotentHint" not in annotations
    else:
        assert annotations["destructiveHint"] is flags["destructive"]
        assert annotations["idempotentHint"] is flags["idempotent"]
    assert entry["outputSchema"]["properties"] == {"hits": {"title": "Hits", "type": "integer"}}


def test_the_record_of_a_renamed_tool_differs_only_in_its_name() -> None:
    for before, after in zip(ORIGINAL.tools, RENAMED.tools, strict=True):
        old, new = before.info, after.info
        derived = after.name.replace("_", " ").capitalize()
        display = old.display_name if old.display_name.startswith("Finder ") else derived
        assert new == old.replace(name=after.name, display_name=display)
        # What the pipeline reads per call is the tool's own too.
        assert (after.read_only, after.timeout, after.output_cap, after.concurrency_safe) == (
            before.read_only,
            before.timeout,
            before.output_cap,
            before.concurrency_safe,
        )


@tool
def broken(callback: Callable[[int], int]) -> int:
    """A tool whose input has no JSON schema."""
    return callback(1)


def test_a_renamed_tool_is_listed_without_building_its_schema() -> None:
    hub = ToolHub(autoload=False, config={}, rename={"broken": "renamed_broken"})
    hub.add_plugin(plugin_of(broken, TOOLS[0]), name="pack")
    listed = {t.name: t for t in hub.listing().tools}
    assert listed["renamed_broken"].description == "A tool whose input has no JSON schema."
    assert not listed["renamed_broken"].read_only
    assert hub.catalog().tool_names() == ["search_0000"]
    [problem] = hub.problems()
    assert (problem.kind, problem.item) == ("invalid-tool", "renamed_broken")
