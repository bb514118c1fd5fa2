"""The prompts and resources packs ship: decorated, collected per pack, selected, swept."""

from __future__ import annotations

import base64
import types as pytypes

import pytest
import toolpalette
from toolpalette import (
    ContentSelector,
    File,
    Image,
    Thinker,
    ToolDefinitionError,
    ToolHub,
    prompt,
    resource,
)


@prompt(completions={"tone": ["formal", "friendly"]})
def greet(name: str, tone: str = "friendly") -> str:
    """Greet someone.

    Args:
        name: who to greet.
        tone: how, formal or friendly;
            friendly by default.
    """
    return f"Say hello to {name}, {tone}."


@resource("notes://{day}/{slot}")
def note(day: str, slot: str) -> str:
    """A note of one slot of a day."""
    return f"{day} at {slot}"


@resource("notes://index")
def index() -> bytes:
    return b"\x00\x01"


@resource("notes://wipe", read_only=False)
def wipe() -> str:
    return "wiped"


def plugin(name: str, prompts: object = (), resources: object = ()) -> pytypes.SimpleNamespace:
    class Hooks:
        @toolpalette.hookimpl
        def toolpalette_register_prompts(self) -> object:
            return prompts

        @toolpalette.hookimpl
        def toolpalette_register_resources(self) -> object:
            return resources

    return Hooks()  # type: ignore[return-value]


def test_a_prompt_reads_its_arguments_and_renders_messages():
    spec = toolpalette.PackPrompt
    made = hub_with(plugin("p", [greet])).prompts()[0]
    assert isinstance(made, spec)
    assert made.description == "Greet someone."
    assert [(a.name, a.description, a.required) for a in made.arguments] == [
        ("name", "who to greet.", True),
        ("tone", "how, formal or friendly; friendly by default.", False),
    ]
    assert made.render({"name": "Ada"}) == [
        {"role": "user", "content": {"type": "text", "text": "Say hello to Ada, friendly."}}
    ]
    assert made.complete("tone", "f") == ["formal", "friendly"]
    assert made.complete("tone", "fr") == ["friendly"]
    assert made.complete("name", "") == []
    with pytest.raises(ValueError, match="missing required argument"):
        made.render({})
    with pytest.raises(ValueError, match="strings"):
        made.render({"name": 3})


def test_messages_take_images_files_pairs_and_blocks():
    @prompt
    def rich() -> list[object]:
        return [
            Image(b"png", "image/png"),
            File("text", "a.txt", "text/plain"),
            ("assistant", "done"),
            {"role": "user", "content": {"type": "text", "text": "ok"}},
        ]

    @prompt
    def broken() -> object:
        return 42

    rendered = hub_with(plugin("p", [rich, broken])).content_for(Everything).prompt("rich")
    assert rendered is not None
    messages = rendered.render({})
    assert messages[0]["content"] == {
        "type": "image",
        "data": base64.b64encode(b"png").decode(),
        "mimeType": "image/png",
    }
    assert messages[1]["content"]["type"] == "resource"
    assert messages[2] == {"role": "assistant", "content": {"type": "text", "text": "done"}}
    assert messages[3]["content"] == {"type": "text", "text": "ok"}
    with pytest.raises(ValueError, match="content is a text"):
        broken.__toolpalette_prompt__.render({})  # type: ignore[attr-defined]


def test_a_template_matches_its_uris_and_reads_them():
    spec = note.__toolpalette_resource__  # type: ignore[attr-defined]
    assert spec.templated
    assert spec.params == ("day", "slot")
    assert spec.match("notes://monday/9%3A00") == {"day": "monday", "slot": "9:00"}
    assert spec.match("notes://monday") is None
    assert spec.match("notes://a/b/c") is None
    assert spec.read("notes://mon/am") == [
        {"uri": "notes://mon/am", "mimeType": "text/plain", "text": "mon at am"}
    ]
    binary = index.__toolpalette_resource__  # type: ignore[attr-defined]
    assert binary.read("notes://index")[0]["blob"] == base64.b64encode(b"\x00\x01").decode()
    with pytest.raises(LookupError):
        binary.read("notes://other")


@pytest.mark.parametrize(
    ("declare", "reason"),
    [
        (lambda: resource("no-scheme")(lambda: "x"), "scheme://"),
        (lambda: resource("a://{x}")(lambda y: "x"), "parameters must be the template's"),
        (lambda: resource("a://{x}/{x}")(lambda x: "x"), "repeated"),
        (lambda: prompt(name="bad name")(lambda: "x"), "names are"),
        (lambda: prompt(name="p", completions={"nope": []})(lambda a: "x"), "unknown argument"),
    ],
)
def test_bad_declarations_are_refused(declare: object, reason: str):
    with pytest.raises(ToolDefinitionError, match=reason):
        declare()  # type: ignore[operator]


class Everything(Thinker):
    @classmethod
    def declare_content(cls) -> ContentSelector:
        return ContentSelector().all()


class ReadOnly(Everything):
    read_only = True


def hub_with(*plugins: object) -> ToolHub:
    hub = ToolHub(autoload=False)
    for position, item in enumerate(plugins):
        hub.add_plugin(item, name=f"pack{position}")
    return hub


def test_hook_toolpalette_register_prompts():
    hub = hub_with(plugin("p", [greet]))
    assert [p.name for p in hub.prompts()] == ["greet"]
    assert hub.prompts()[0].pack == "pack0"


def test_hook_toolpalette_register_resources():
    hub = hub_with(plugin("p", resources=[note, index, wipe]))
    assert [r.uri for r in hub.resources()] == [
        "notes://index",
        "notes://wipe",
        "notes://{day}/{slot}",
    ]


def test_garbage_and_collisions_are_problems_and_the_rest_is_kept():
    hub = hub_with(plugin("a", [greet, 42], [note]), plugin("b", [greet], [index]))
    assert hub.prompts() == []  # two packs ship "greet": neither
    assert [r.uri for r in hub.resources()] == ["notes://index", "notes://{day}/{slot}"]
    kinds = sorted((p.kind, p.item) for p in hub.problems() if p.kind in ("garbage", "collision"))
    assert kinds == [("collision", "greet"), ("garbage", None)]


def test_thinkers_select_by_pack_name_or_function_and_read_only_sweeps():
    hub = hub_with(plugin("a", [greet], [note, wipe]), plugin("b", resources=[index]))

    class ByPack(Thinker):
        @classmethod
        def declare_content(cls) -> ContentSelector:
            return ContentSelector().pack("pack1").prompt("greet")

    class Own(Thinker):
        @classmethod
        def declare_content(cls) -> ContentSelector:
            @prompt(name="own")
            def mine() -> str:
                return "mine"

            return ContentSelector().prompt(mine).resource("notes://wipe")

    by_pack = hub.content_for(ByPack)
    assert [p.name for p in by_pack.prompts] == ["greet"]
    assert [r.uri for r in by_pack.resources] == ["notes://index"]
    own = hub.content_for(Own)
    assert [p.name for p in own.prompts] == ["own"]
    assert [r.uri for r in own.resources] == ["notes://wipe"]
    assert sorted(r.uri for r in hub.content_for(Everything).resources) == [
        "notes://index",
        "notes://wipe",
        "notes://{day}/{slot}",
    ]
    assert "notes://wipe" not in {r.uri for r in hub.content_for(ReadOnly).resources}
    assert hub.content_for(Thinker).prompts == ()
    found = hub.content_for(Everything).resource_for("notes://index")
    assert found is not None
    assert found[0].uri == "notes://index"
    with pytest.raises(TypeError):
        ContentSelector().prompt(42)
