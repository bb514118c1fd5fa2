"""write_file, edit_file, make_directory and move_path on a real directory."""

from __future__ import annotations

import os
import stat

import pytest
from toolpalette import ToolError
from toolpalette_files import tools


def test_write_creates_then_overwrites(workspace, call):
    made = call(tools.write_file, path="notes.txt", content="héllo\n")
    assert (made.path, made.bytes_written, made.created) == ("notes.txt", 7, True)
    again = call(tools.write_file, path="notes.txt", content="bye")
    assert (again.bytes_written, again.created) == (3, False)
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "bye"
    assert [p.name for p in workspace.iterdir()] == ["notes.txt"]  # no temporary left


def test_write_without_overwrite_refuses_an_existing_file(workspace, call):
    (workspace / "keep.txt").write_text("keep")
    with pytest.raises(ToolError) as info:
        call(tools.write_file, path="keep.txt", content="x", overwrite=False)
    assert (info.value.code, info.value.status) == ("exists", 409)
    assert (workspace / "keep.txt").read_text() == "keep"


def test_write_keeps_permissions(workspace, call):
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    call(tools.write_file, path="run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


def test_write_needs_the_parent_and_refuses_a_directory(workspace, call):
    (workspace / "d").mkdir()
    with pytest.raises(ToolError) as info:
        call(tools.write_file, path="missing/x.txt", content="x")
    assert info.value.code == "not_found"
    with pytest.raises(ToolError) as info:
        call(tools.write_file, path="d", content="x")
    assert info.value.code == "is_directory"


def test_write_through_an_inside_link_updates_the_target(workspace, call):
    (workspace / "real.txt").write_text("old")
    (workspace / "link.txt").symlink_to("real.txt")
    call(tools.write_file, path="link.txt", content="new")
    assert (workspace / "real.txt").read_text() == "new"
    assert (workspace / "link.txt").is_symlink()


def test_edit_replaces_exactly_one_occurrence(workspace, call):
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    result = call(tools.edit_file, path="a.py", old_text="y = 2", new_text="y = 3")
    assert (result.replacements, result.size) == (1, 12)
    assert (workspace / "a.py").read_text() == "x = 1\ny = 3\n"


def test_edit_refuses_no_match_and_ambiguous_match(workspace, call):
    (workspace / "a.py").write_text("a\na\n")
    with pytest.raises(ToolError) as info:
        call(tools.edit_file, path="a.py", old_text="b", new_text="c")
    assert (info.value.code, info.value.status) == ("no_match", 422)
    with pytest.raises(ToolError) as info:
        call(tools.edit_file, path="a.py", old_text="a", new_text="c")
    assert info.value.code == "ambiguous_match"
    assert "2 times" in info.value.user_message
    assert (workspace / "a.py").read_text() == "a\na\n"


def test_edit_replace_all(workspace, call):
    (workspace / "a.py").write_text("a\na\n")
    result = call(tools.edit_file, path="a.py", old_text="a", new_text="bb", replace_all=True)
    assert result.replacements == 2
    assert (workspace / "a.py").read_text() == "bb\nbb\n"


def test_edit_refuses_empty_old_text_binary_and_non_utf8(workspace, call):
    (workspace / "a.txt").write_text("a")
    (workspace / "b.bin").write_bytes(b"a\x00b")
    (workspace / "c.txt").write_bytes("café".encode("latin-1"))
    cases = [
        ("a.txt", "", "invalid_edit"),
        ("b.bin", "a", "binary_file"),
        ("c.txt", "caf", "not_utf8"),
    ]
    for path, old, code in cases:
        with pytest.raises(ToolError) as info:
            call(tools.edit_file, path=path, old_text=old, new_text="x")
        assert info.value.code == code
    assert (workspace / "c.txt").read_bytes() == "café".encode("latin-1")


def test_make_directory_with_and_without_parents(workspace, call):
    made = call(tools.make_directory, path="a/b/c")
    assert (made.path, made.created) == ("a/b/c", True)
    assert (workspace / "a" / "b" / "c").is_dir()
    assert call(tools.make_directory, path="a/b/c").created is False
    with pytest.raises(ToolError) as info:
        call(tools.make_directory, path="x/y", parents=False)
    assert info.value.code == "not_found"
    (workspace / "file").write_text("")
    with pytest.raises(ToolError) as info:
        call(tools.make_directory, path="file")
    assert info.value.code == "exists"


def test_move_renames_files_and_directories(workspace, call):
    (workspace / "a.txt").write_text("a")
    (workspace / "d").mkdir()
    (workspace / "d" / "x.txt").write_text("x")
    moved = call(tools.move_path, source="a.txt", destination="d/b.txt")
    assert (moved.source, moved.destination) == ("a.txt", "d/b.txt")
    call(tools.move_path, source="d", destination="e")
    assert sorted(os.listdir(workspace / "e")) == ["b.txt", "x.txt"]


def test_move_refusals(workspace, call):
    (workspace / "a.txt").write_text("a")
    (workspace / "b.txt").write_text("b")
    (workspace / "d").mkdir()
    cases = [
        ({"source": "nope", "destination": "x"}, "not_found"),
        ({"source": "a.txt", "destination": "b.txt"}, "exists"),
        ({"source": "d", "destination": "d/inner"}, "invalid_move"),
        ({"source": ".", "destination": "x"}, "invalid_move"),
    ]
    for raw, code in cases:
        with pytest.raises(ToolError) as info:
            call(tools.move_path, **raw)
        assert info.value.code == code, raw
    assert (workspace / "b.txt").read_text() == "b"
    call(tools.move_path, source="a.txt", destination="b.txt", overwrite=True)
    assert (workspace / "b.txt").read_text() == "a"
