"""Helpers that build skilljar packages on disk and the entry points that name them."""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from toolpalette._plugins.discovery import SKILLJAR_GROUP, EntryPointInfo

_counter = itertools.count()

MakeJar = Callable[..., EntryPointInfo]


def _skill_md(
    name: str | None = None, description: str | None = "Does a thing.", **extra: str
) -> str:
    """A SKILL.md text with the given front matter fields and a small body."""
    lines = []
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    lines.extend(f"{key}: {value}" for key, value in extra.items())
    return "---\n" + "\n".join(lines) + "\n---\n\n# Body\n\nDo the thing.\n"


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> None:
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")


@pytest.fixture
def make_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MakeJar:
    """Build an importable jar package under tmp_path; return its entry point info.

    Each package gets a unique import name, so no test sees another's modules.
    """
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(
        bundle: str,
        files: Mapping[str, str | bytes],
        *,
        distribution: str | None = "example-jar",
        version: str | None = "1.0",
        init: str = "",
    ) -> EntryPointInfo:
        package = f"testjar_{next(_counter)}"
        root = tmp_path / package
        root.mkdir()
        (root / "__init__.py").write_text(init, encoding="utf-8")
        write_tree(root, files)
        return EntryPointInfo(SKILLJAR_GROUP, bundle, package, distribution, version)

    return make


@pytest.fixture
def skill_md() -> Callable[..., str]:
    """Build a SKILL.md text: ``skill_md("name", "description", license="MIT")``."""
    return _skill_md
