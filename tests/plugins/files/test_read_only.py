"""list_directory, search_files and file_info on a real directory."""

from __future__ import annotations

import pytest
from toolpalette import ToolError
from toolpalette_files import tools


@pytest.fixture
def tree(workspace):
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "src" / "pkg" / "main.py").write_text("import os\nprint('Hello')\n")
    (workspace / "src" / "pkg" / "util.py").write_text("def hello():\n    return 1\n")
    (workspace / "README.md").write_text("# Hello world\n")
    (workspace / "data.bin").write_bytes(b"hello\x00world")
    (workspace / "link.md").symlink_to("README.md")
    return workspace


def test_list_directory(tree, call):
    listing = call(tools.list_directory)
    assert listing.path == "."
    assert [(e.name, e.type, e.size) for e in listing.entries] == [
        ("README.md", "file", 14),
        ("data.bin", "file", 11),
        ("link.md", "symlink", None),
        ("src", "directory", None),
    ]
    assert (listing.total, listing.truncated) == (4, False)
    sub = call(tools.list_directory, path="src/pkg", limit=1)
    assert [e.name for e in sub.entries] == ["main.py"]
    assert (sub.total, sub.truncated) == (2, True)


def test_list_directory_refuses_a_file(tree, call):
    with pytest.raises(ToolError) as info:
        call(tools.list_directory, path="README.md")
    assert info.value.code == "not_directory"


def test_search_by_name(tree, call):
    result = call(tools.search_files, pattern="*.py")
    assert [m.path for m in result.matches] == ["src/pkg/main.py", "src/pkg/util.py"]
    assert all(m.line is None for m in result.matches)
    nested = call(tools.search_files, pattern="pkg/m*.py", path="src")
    assert [m.path for m in nested.matches] == ["src/pkg/main.py"]


def test_search_by_text(tree, call):
    result = call(tools.search_files, contains="Hello")
    assert [(m.path, m.line, m.text) for m in result.matches] == [
        ("README.md", 1, "# Hello world"),
        ("link.md", 1, "# Hello world"),
        ("src/pkg/main.py", 2, "print('Hello')"),
    ]
    assert result.files_skipped == 1  # data.bin
    folded = call(tools.search_files, contains="hello", ignore_case=True, pattern="*.py")
    assert [m.path for m in folded.matches] == ["src/pkg/main.py", "src/pkg/util.py"]


def test_search_is_bounded(workspace, call):
    for i in range(30):
        (workspace / f"f{i:02d}.txt").write_text("needle\n" * 3)
    result = call(tools.search_files, contains="needle", limit=10)
    assert len(result.matches) == 10
    assert result.truncated is True


def test_search_needs_something_to_look_for(tree, call):
    with pytest.raises(ToolError) as info:
        call(tools.search_files)
    assert info.value.code == "invalid_search"


def test_search_stops_when_aborted(tree, ctx, call):
    ctx.abort.set()
    result = call(tools.search_files, pattern="*")
    assert result.truncated is True
    assert result.matches == []


def test_file_info(tree, call):
    info = call(tools.file_info, path="README.md")
    assert (info.type, info.size, info.binary, info.link_target) == ("file", 14, False, None)
    assert info.modified.endswith("+00:00")
    assert call(tools.file_info, path="data.bin").binary is True
    link = call(tools.file_info, path="link.md")
    assert (link.type, link.link_target, link.size) == ("symlink", "README.md", 14)
    assert call(tools.file_info, path="src").type == "directory"
    assert call(tools.file_info, path=".").path == "."
    with pytest.raises(ToolError) as missing:
        call(tools.file_info, path="nope")
    assert missing.value.status == 404
