"""The packages the core's tests check toolpalette against are installed, or said missing.

A test module that needs a peer (a provider SDK, an agent framework, ``mcp``) skips
when the peer cannot be imported, so a Python a peer does not support still runs the
rest. That skip must never hide a peer left out by mistake: the nox sessions name, in
``TOOLPALETTE_TEST_MISSING_PEERS``, the peers they could not install on their Python,
and this test fails for any other peer that is missing.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _peers() -> list[str]:
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = groups["dependency-groups"]["test-peers"]
    return [re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0] for r in declared] + ["mcp"]


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def test_every_peer_is_installed_unless_its_session_said_it_could_not_be() -> None:
    said = set(filter(None, os.environ.get("TOOLPALETTE_TEST_MISSING_PEERS", "").split(",")))
    peers = _peers()
    assert said <= set(peers), f"unknown peers named: {sorted(said - set(peers))}"
    missing = [p for p in peers if p not in said and not _installed(p)]
    assert missing == [], (
        f"not installed: {', '.join(missing)} (install the test dependency group, "
        "or run the tests through nox)"
    )
