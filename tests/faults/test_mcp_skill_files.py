"""A skill's files over MCP are bounded like ``read_skill_file``: listed ones, up to its cap.

Before the fix, ``resources/read`` read a file whole, whatever its size (a 10 MB file
peaked at 322 MB; 300 MB reached 5.9 GB), and served any file under the skill's
folder by path, hidden ones (``.env``) included, though ``resources/list`` left them
out. Now it serves only what the skill lists, and refuses a file over
``read_skill_file``'s cap after reading one byte past it.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra: pip install 'toolpalette[mcp]'")

import mcp_types as types
import toolpalette.mcp
from mcp import Client
from mcp.shared.exceptions import MCPError
from toolpalette import SkillSelector, Thinker, ToolHub

CAP = 256 * 1024
"""``read_skill_file``'s cap, in bytes."""
BUNDLE = "io.example.bounded"
SECRET = "sk-SECRET-in-dot-env-4c1d"
ERAS = ["legacy", "auto"]


class Reader(Thinker):
    """Declares the skills of the bundle made below."""

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        return SkillSelector().prefix(BUNDLE)


@pytest.fixture
def hub(tmp_path: Path) -> ToolHub:
    folder = tmp_path / "jar" / "bounded"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: bounded\ndescription: Has files of every size.\n---\nRead them.\n",
        encoding="utf-8",
    )
    (folder / "references" / "at-cap.txt").write_bytes(b"a" * CAP)
    (folder / "references" / "over-cap.txt").write_bytes(b"a" * (CAP + 1))
    with (folder / "references" / "huge.txt").open("wb") as huge:
        huge.truncate(24 * 1024 * 1024)  # sparse: no disk used, 24 MB read whole
    (folder / ".env").write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
    (folder / "references" / ".draft.md").write_text(SECRET, encoding="utf-8")
    hub = ToolHub(autoload=False)
    hub.skills().add_directory(BUNDLE, tmp_path / "jar")
    return hub


@asynccontextmanager
async def connect(hub: ToolHub, mode: str) -> AsyncIterator[Client]:
    async with Client(toolpalette.mcp.server(hub, Reader), mode=mode) as client:
        yield client


def uri(path: str) -> str:
    return f"skill://{BUNDLE}/bounded/{path}"


@pytest.mark.parametrize("mode", ERAS)
async def test_a_file_over_the_cap_is_refused_after_reading_no_more_than_the_cap(
    hub: ToolHub, mode: str
):
    async with connect(hub, mode) as client:
        at_cap = await client.read_resource(uri("references/at-cap.txt"))
        assert len(at_cap.contents[0].text) == CAP  # type: ignore[union-attr]
        refusals: list[Any] = []
        tracemalloc.start()
        try:
            for path in ("references/over-cap.txt", "references/huge.txt"):
                with pytest.raises(MCPError) as caught:
                    await client.read_resource(uri(path))
                refusals.append((caught.value.code, caught.value.message))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    expected = (
        types.INVALID_PARAMS,
        f"The file is larger than {CAP} bytes; it cannot be read here.",
    )
    assert refusals == [expected, expected]
    assert peak < 8 * 1024 * 1024  # the 24 MB file was never read whole


@pytest.mark.parametrize("mode", ERAS)
async def test_only_the_files_a_skill_lists_are_served(hub: ToolHub, mode: str):
    async with connect(hub, mode) as client:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        answers = []
        for path in (".env", "references/.draft.md", "references/no-such-file.md"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri(path))
            answers.append((caught.value.code, caught.value.message))
    assert listed == {
        uri("SKILL.md"),
        *(uri(f"references/{name}") for name in ("at-cap.txt", "huge.txt", "over-cap.txt")),
    }
    # A hidden file is answered exactly as a missing one: nothing tells them apart.
    # -32002 on the 2025 era; 2026-07-28 gives it up for -32602 (SEP-2164).
    code = -32002 if mode == "legacy" else types.INVALID_PARAMS
    assert answers == [(code, "Resource not found.")] * 3
    assert all(SECRET not in message for _, message in answers)
