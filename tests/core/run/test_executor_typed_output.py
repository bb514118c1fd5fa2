"""Output through the tool's return annotation, and rich content (images, audio, files)."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import json
import pickle
from typing import Any

import pydantic
import pytest
from toolpalette import Audio, Executor, File, Image, ResourceLink, ToolRegistry, tool
from toolpalette.errors import ToolDefinitionError
from toolpalette.testing import as_provider

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


class Event(pydantic.BaseModel):
    title: str
    day: datetime.date


@dataclasses.dataclass
class Slot:
    start: datetime.datetime


@tool
def events() -> list[Event]:
    """List the events."""
    return [Event(title="launch", day=datetime.date(2026, 11, 30))]


@tool
def today() -> datetime.date:
    """Today's date."""
    return datetime.date(2026, 11, 30)


@tool
def stats() -> dict[str, Any]:
    """A dict holding a date and a set."""
    return {"when": datetime.date(2026, 1, 2), "tags": {"a"}}


@tool
def one_event() -> Event:
    """One event."""
    return Event(title="one", day=datetime.date(2026, 1, 1))


@tool
def slots() -> tuple[Slot, ...]:
    """Dataclasses in a tuple."""
    return (Slot(datetime.datetime(2026, 1, 1, 9, 30)),)


def call(*tools: object, name: str, cap: int | None = None) -> Any:
    executor = Executor(ToolRegistry(list(tools)), **({"output_cap": cap} if cap else {}))
    return executor.execute_sync(name, {})


def test_a_list_of_models_ships_as_json_and_as_a_wrapped_structured_result() -> None:
    result = call(events, name="events")
    assert not result.is_error, result.text
    bare = [{"title": "launch", "day": "2026-11-30"}]
    assert json.loads(result.text) == bare  # the model reads the bare value
    assert result.structured == {"result": bare}  # MCP wants an object: wrapped
    schema = as_provider(events).output_schema
    assert schema is not None
    assert schema["x-toolpalette-wrapped"] is True
    assert schema["required"] == ["result"]
    assert schema["properties"]["result"]["items"] == {"$ref": "#/$defs/Event"}
    assert "Event" in schema["$defs"]  # hoisted, where the reference resolves


def test_a_date_and_a_dict_holding_a_date_ship_as_json() -> None:
    dated = call(today, name="today")
    assert dated.text == "2026-11-30"  # a string ships as text
    assert dated.structured == {"result": "2026-11-30"}
    result = call(stats, name="stats")
    assert json.loads(result.text) == {"when": "2026-01-02", "tags": ["a"]}
    assert result.structured == {"when": "2026-01-02", "tags": ["a"]}  # an object: as it is
    schema = as_provider(stats).output_schema
    assert schema is not None
    assert "x-toolpalette-wrapped" not in schema


def test_a_model_still_publishes_its_schema_and_structured_output() -> None:
    provider = as_provider(one_event)
    assert provider.output_schema is not None
    assert provider.output_schema["properties"]["day"] == {
        "format": "date",
        "title": "Day",
        "type": "string",
    }
    result = call(one_event, name="one_event")
    assert result.structured == {"title": "one", "day": "2026-01-01"}


def test_dataclasses_in_a_tuple_ship_as_json() -> None:
    assert json.loads(call(slots, name="slots").text) == [{"start": "2026-01-01T09:30:00"}]


def test_a_value_off_its_annotation_that_is_not_json_is_still_a_500() -> None:
    @tool
    def liar() -> int:
        """Claims an int."""
        return object()  # type: ignore[return-value]

    result = call(liar, name="liar")
    assert (result.status, result.code) == (500, "invalid_output")


class Opaque:
    pass


def test_an_unserializable_return_annotation_is_refused_at_definition() -> None:
    def opaque() -> Opaque:
        """Returns something pydantic cannot describe."""
        return Opaque()

    with pytest.raises(ToolDefinitionError) as info:
        as_provider(tool(opaque))
    assert "return annotation Opaque cannot be serialized" in info.value.reason
    assert "arbitrary_types_allowed" not in info.value.reason  # advice for models, not tools

    def opaques() -> list[Opaque]:
        """Returns a list of them."""
        return []

    with pytest.raises(ToolDefinitionError, match=r"return annotation list\[.*Opaque\]"):
        as_provider(tool(opaques))


# -- rich content -------------------------------------------------------------------


@tool
def snapshot() -> Image:
    """A PNG."""
    return Image(PNG, "image/png")


@tool
def report() -> list[str | Image | Audio | File]:
    """Text, an image, a clip and two files."""
    return [
        "Here is the chart:",
        Image(PNG, mime_type="image/png"),
        Audio(b"RIFF....WAVE", mime_type="audio/wav"),
        File(b"\x00\x01", name="raw.bin"),
        File("a,b\n1,2\n", name="data.csv", mime_type="text/csv"),
    ]


def test_an_image_becomes_an_image_block() -> None:
    result = call(snapshot, name="snapshot")
    assert not result.is_error, result.text
    assert result.content == [
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    ]
    assert result.text == f"[image: image/png, {len(PNG)} bytes]"
    assert result.structured is None
    assert as_provider(snapshot).output_schema is None


def test_mixed_content_keeps_its_order_and_types() -> None:
    result = call(report, name="report")
    assert [b["type"] for b in result.content] == ["text", "image", "audio", "resource", "resource"]
    assert result.content[0] == {"type": "text", "text": "Here is the chart:"}
    assert result.content[2]["mimeType"] == "audio/wav"
    assert base64.b64decode(result.content[2]["data"]) == b"RIFF....WAVE"
    assert result.content[3]["resource"] == {
        "uri": "file:///raw.bin",
        "mimeType": "application/octet-stream",
        "blob": base64.b64encode(b"\x00\x01").decode(),
    }
    assert result.content[4]["resource"] == {
        "uri": "file:///data.csv",
        "mimeType": "text/csv",
        "text": "a,b\n1,2\n",
    }
    assert result.text.splitlines()[0] == "Here is the chart:"
    assert "[file data.csv: text/csv, 8 bytes]" in result.text
    # The JSON form round-trips.
    assert type(result).from_dict(json.loads(result.to_json())) == result


def test_rich_content_bytes_count_against_the_cap() -> None:
    assert not call(snapshot, name="snapshot", cap=len(PNG)).is_error
    over = call(snapshot, name="snapshot", cap=len(PNG) - 1)
    assert (over.status, over.code) == (413, "output_too_large")
    assert over.content == [{"type": "text", "text": over.text}]


def test_a_list_of_plain_strings_is_still_json() -> None:
    @tool
    def names() -> list[str]:
        """Names."""
        return ["a", "b"]

    assert call(names, name="names").text == '["a","b"]'


def test_a_content_list_with_something_else_is_a_500() -> None:
    @tool
    def mixed() -> list[Any]:
        """Mixes an image with a dict."""
        return [Image(PNG), {"a": 1}]

    result = call(mixed, name="mixed")
    assert (result.status, result.code) == (500, "invalid_output")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Image("not bytes"), "data must be bytes"),  # type: ignore[arg-type]
        (lambda: Image(PNG, mime_type="audio/wav"), "must be image/"),
        (lambda: Audio(b"x", mime_type="image/png"), "must be audio/"),
        (lambda: File(b"x", name="a/b"), "plain file name"),
        (lambda: File(b"x", name="a", mime_type="nonsense"), "type/subtype"),
    ],
)
def test_content_types_refuse_bad_fields(build: Any, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        build()


def test_content_types_compare_by_value() -> None:
    assert Image(PNG) == Image(bytearray(PNG))
    assert Image(PNG) != Image(PNG, "image/jpeg")
    assert len({File("x", name="a"), File("x", name="a")}) == 1
    assert repr(Audio(b"abc")) == "Audio(audio/wav, 3 bytes)"


def test_content_types_are_frozen_dataclasses_checked_again_when_replaced() -> None:
    image = Image(PNG)
    with pytest.raises(dataclasses.FrozenInstanceError):
        image.mime_type = "image/jpeg"  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):  # TypeError before Python 3.12
        image.extra = 1  # type: ignore[attr-defined]
    assert dataclasses.replace(image, mime_type="image/jpeg") == Image(PNG, "image/jpeg")
    with pytest.raises(ValueError, match="must be image/"):
        dataclasses.replace(image, mime_type="audio/wav")
    assert File("x", name="a b") == File("x", name="a b", uri="file:///a%20b")
    assert File("x", name="a").uri == "file:///a"
    assert ResourceLink("a:b", "x", title="") == ResourceLink("a:b", "x")
    assert pickle.loads(pickle.dumps(File(b"\x00", name="raw.bin"))) == File(b"\x00", "raw.bin")
