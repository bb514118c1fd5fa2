"""The host guide's "Deploying" page: its example runs, its commands and settings exist.

The Python example (two callers, two palettes) runs as written and prints what its
comment says; every option of its ``toolpalette serve`` commands is one ``serve``
takes; its ``toolpalette.toml`` is read with no ``config`` problem.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import toolpalette

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "deploying.md"
CODE = "import sys; from toolpalette._cli import main; sys.exit(main())"


def section() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    assert text.startswith("# Deploying\n")
    return text


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", section(), re.MULTILINE | re.DOTALL)


def test_the_palettes_example_prints_what_it_says(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the example needs the mcp extra")
    pytest.importorskip("toolpalette_files", reason="the example uses the files pack")
    (example,) = [b for b in blocks("python") if "# file: deploy_palettes.py" in b]
    script = tmp_path / "deploy_palettes.py"
    script.write_text(example, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ana True True", "ben False True"]


def test_every_serve_option_of_the_section_exists() -> None:
    pytest.importorskip("mcp", reason="serve's help needs nothing, but its options do")
    shown = subprocess.run(
        [sys.executable, "-c", CODE, "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    commands = " ".join(b.replace("\\\n", " ") for b in blocks("bash"))
    used = set(re.findall(r"toolpalette serve[^\n]*", commands))
    options = {o for line in used for o in re.findall(r"(--[a-z][a-z-]+)", line)}
    assert {"--workers", "--auth-issuer", "--auth-jwks-url"} <= options
    for option in options:
        assert option in shown, option


def test_the_sections_configuration_is_read_without_a_problem(tmp_path: Path) -> None:
    (config,) = blocks("toml")
    file = tmp_path / "toolpalette.toml"
    file.write_text(config, encoding="utf-8")
    hub = toolpalette.ToolHub(config=file, autoload=False)
    assert [p for p in hub.problems() if p.kind == "config"] == []
    assert set(hub.config.serve) == {
        "auth_issuer",
        "auth_audience",
        "auth_jwks_url",
        "auth_required_scopes",
        "palettes",
    }
