"""``x-mcp-header``: a parameter mirrored as an HTTP header is declared as SEP-2243 says."""

from __future__ import annotations

from typing import Any

import pytest
import toolpalette
from toolpalette import InvalidToolSchemaError
from toolpalette.testing import as_provider


def declared(edit: Any) -> Any:
    @toolpalette.tool(read_only=True, refine_schema=edit)
    def lookup(region: str, limit: int = 3, options: dict[str, str] | None = None) -> str:
        """Look something up in a region."""
        return region

    return as_provider(lookup)


def test_a_string_parameter_may_be_mirrored():
    provider = declared(lambda s: s["properties"]["region"].update({"x-mcp-header": "Region"}))
    assert provider.input_schema["properties"]["region"]["x-mcp-header"] == "Region"


def _nested(schema: dict[str, Any]) -> None:
    schema["anyOf"] = [{"properties": {"region": {"type": "string", "x-mcp-header": "R"}}}]


def _twice(schema: dict[str, Any]) -> None:
    schema["properties"]["region"]["x-mcp-header"] = "Region"
    schema["properties"]["limit"]["x-mcp-header"] = "region"


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda s: s["properties"]["region"].update({"x-mcp-header": "Bad Name"}), "token"),
        (lambda s: s["properties"]["region"].update({"x-mcp-header": 7}), "token"),
        (lambda s: s["properties"]["options"].update({"x-mcp-header": "Opts"}), "string, integer"),
        (lambda s: s.update({"x-mcp-header": "Root"}), "not the root"),
        (_nested, "reached through properties"),
        (_twice, "repeats"),
    ],
)
def test_a_bad_declaration_is_refused(edit: Any, why: str):
    with pytest.raises(InvalidToolSchemaError) as caught:
        _ = declared(edit).input_schema
    assert why in str(caught.value)


def test_a_property_named_like_the_keyword_is_not_a_declaration():
    def edit(schema: dict[str, Any]) -> None:
        schema["properties"]["x-mcp-header"] = {"type": "string"}

    assert "x-mcp-header" in declared(edit).input_schema["properties"]
