"""FIFOs, sockets and devices in a workspace: refused with a 400, nothing left hanging.

Before the fix, ``read_file`` on a FIFO blocked its worker thread in ``open()`` until a
writer came, which never did; the leak check of this suite would see that thread.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import toolpalette
from toolpalette import ToolContext
from toolpalette.testing import make_registry
from toolpalette_files import tools as files

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")


@pytest.fixture
def special(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / "pipe")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(root / "sock"))
    (root / "link").symlink_to("pipe")
    try:
        yield root, ["pipe", "sock", "link"]
    finally:
        server.close()


CALLS = [
    ("read_file", lambda p: {"path": p}),
    ("edit_file", lambda p: {"path": p, "old_text": "a", "new_text": "b"}),
    ("write_file", lambda p: {"path": p, "content": "x"}),
]


@pytest.mark.parametrize(("tool_name", "make"), CALLS)
async def test_special_files_are_refused_by_every_tool_that_opens_files(
    special: tuple[Path, list[str]], tool_name: str, make: object
) -> None:
    root, names = special
    registry = make_registry(files.read_file, files.edit_file, files.write_file)
    context = ToolContext(config={"root": str(root)})
    for name in names:
        if tool_name == "write_file" and name == "link":
            continue  # writing through a link replaces the link itself, as for any file
        result = await toolpalette.execute(registry, tool_name, make(name), context=context)  # type: ignore[operator]
        assert (result.status, result.code) == (400, "not_file"), (name, result.text)
        assert "regular file" in result.text
    assert (root / "pipe").is_fifo()  # nothing replaced
    assert (root / "sock").is_socket()


async def test_search_and_info_pass_special_files_over(special: tuple[Path, list[str]]) -> None:
    root, _ = special
    (root / "plain.txt").write_text("needle\n")
    registry = make_registry(files.search_files, files.file_info)
    context = ToolContext(config={"root": str(root)})
    found = await toolpalette.execute(
        registry, "search_files", {"contains": "needle"}, context=context
    )
    assert found.status == 200
    assert [m["path"] for m in found.structured["matches"]] == ["plain.txt"]  # type: ignore[index]
    info = await toolpalette.execute(registry, "file_info", {"path": "pipe"}, context=context)
    assert (info.status, info.structured["type"]) == (200, "other")  # type: ignore[index]


def test_a_fifo_swapped_in_after_the_check_is_still_not_opened_blocking(tmp_path: Path) -> None:
    # open_file itself refuses, whatever a caller checked before (no race window).
    from toolpalette_files._workspace import Workspace

    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / "late")
    ws = Workspace.from_context(ToolContext(config={"root": str(root)}))
    with pytest.raises(toolpalette.ToolError) as info:
        ws.open_file(ws.resolve("late"), os.O_RDONLY)
    assert (info.value.code, info.value.status) == ("not_file", 400)
