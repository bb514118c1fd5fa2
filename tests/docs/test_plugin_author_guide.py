"""The plugin author guide builds a real pack; its files are written out and its tests run."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from toolpalette import ToolSpec
from toolpalette.testing import as_provider

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugin-author-guide.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
FILE_MARKER = re.compile(r"^# file: (\S+)\n")


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(GUIDE.read_text(encoding="utf-8"))]


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("toolpalette-wordcount")
    for _, body in blocks():
        marker = FILE_MARKER.match(body)
        if marker:
            target = root / marker.group(1)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
    return root


def test_the_guide_writes_the_whole_pack(pack: Path) -> None:
    written = sorted(str(p.relative_to(pack)) for p in pack.rglob("*") if p.is_file())
    assert written == [
        "pyproject.toml",
        "src/toolpalette_wordcount/__init__.py",
        "src/toolpalette_wordcount/hooks.py",
        "src/toolpalette_wordcount/tools.py",
        "tests/test_wordcount.py",
    ]
    assert 'wordcount = "toolpalette_wordcount.hooks"' in (pack / "pyproject.toml").read_text()


def test_the_guides_own_tests_pass(pack: Path) -> None:
    # The entry point smoke test needs the pack installed; everything else runs here.
    env = {**os.environ, "PYTHONPATH": str(pack / "src")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "not entry_point",
            "tests/test_wordcount.py",
        ],
        cwd=pack,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed, 1 deselected" in result.stdout


def test_snippets_without_a_file_run() -> None:
    snippets = [body for lang, body in blocks() if lang == "python" and not FILE_MARKER.match(body)]
    assert snippets
    defined: dict[str, object] = {}
    for body in snippets:
        namespace: dict[str, object] = {"__name__": "guide_snippet"}
        exec(compile(body, str(GUIDE), "exec", dont_inherit=True), namespace)
        defined.update(namespace)
    provider = as_provider(defined["repeat"])
    assert provider.input_schema["properties"]["count"]["maximum"] == 10


def test_the_options_table_documents_every_option() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## 6. `@tool` options", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE)
    assert documented == [f.name for f in dataclasses.fields(ToolSpec)]


def test_the_bundle_example_runs_and_grants_through_the_record() -> None:
    [source] = [body for lang, body in blocks() if lang == "python" and 'deferred="bundle"' in body]
    namespace: dict[str, object] = {"__name__": "guide_bundle"}
    exec(compile(source, str(GUIDE), "exec", dont_inherit=True), namespace)  # it asserts
    hub = namespace["hub"]
    granted = [(r.name, r.reason) for r in hub.grants() if r.decision == "granted"]  # type: ignore[attr-defined]
    assert granted == [
        ("forecast", "with the bundle toolpalette_weather"),
        ("rainfall", "with the bundle toolpalette_weather"),
    ]
