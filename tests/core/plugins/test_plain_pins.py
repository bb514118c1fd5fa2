"""A pack's plain pin on toolpalette is decided as ``packaging`` decides it, without it."""

from __future__ import annotations

import itertools

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from toolpalette._plugins.discovery import plainly_met

VERSIONS = ["0.1", "0.1.0", "0.2", "1", "1.0.0", "1.2.3", "2.0", "10.0"]
OPERATORS = ["<", "<=", ">", ">=", "==", "!="]


def packaging_says(line: str, installed: str) -> bool:
    return Requirement(line).specifier.contains(Version(installed), prereleases=True)


@pytest.mark.parametrize("installed", VERSIONS)
def test_one_bound_agrees_with_packaging(installed: str) -> None:
    for op, bound in itertools.product(OPERATORS, VERSIONS):
        line = f"toolpalette{op}{bound}"
        # Met plainly exactly when packaging says met (a failed pin goes to packaging).
        assert plainly_met(line, installed) == packaging_says(line, installed), line


@pytest.mark.parametrize("installed", VERSIONS)
def test_two_bounds_agree_with_packaging(installed: str) -> None:
    for (lo, low), (hi, high) in itertools.product(
        itertools.product([">", ">="], VERSIONS), itertools.product(["<", "<="], VERSIONS)
    ):
        line = f"toolpalette {lo} {low}, {hi}{high}"
        assert plainly_met(line, installed) == packaging_says(line, installed), line


@pytest.mark.parametrize(
    "line",
    [
        "toolpalette~=0.1",
        "toolpalette==0.*",
        "toolpalette>=0.1a1",
        "toolpalette[mcp]>=0.1",
        "toolpalette>=0.1; python_version > '3'",
        "toolpalette (>=0.1)",
        "toolpalette-files>=0.1",
        "toolpalette===0.1.0",
    ],
)
def test_any_other_form_is_left_to_packaging(line: str) -> None:
    assert not plainly_met(line, "0.1.0")


def test_a_version_that_is_not_a_plain_release_is_left_to_packaging() -> None:
    assert plainly_met("toolpalette>=0.1", "0.2.0")
    assert not plainly_met("toolpalette>=0.1", "0.2.0rc1")
    assert not plainly_met("toolpalette>=0.1", "0.2.0.dev3+local")
