"""Nothing escapes the workspace root, whichever tool is asked and however."""

from __future__ import annotations

import os

import pytest
from toolpalette import ToolError
from toolpalette_files import tools

ESCAPES = [
    "../outside/secret.txt",
    "..",
    "a/../../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "a\\..\\..\\outside\\secret.txt",
    "/etc/passwd",
    "//etc/passwd",
    "\\\\server\\share\\x",
    "C:\\Windows\\win.ini",
]

# (tool, extra input) for every tool that takes a path
PATH_TOOLS = [
    (tools.read_file, {}),
    (tools.list_directory, {}),
    (tools.search_files, {"pattern": "*"}),
    (tools.file_info, {}),
    (tools.write_file, {"content": "pwned"}),
    (tools.edit_file, {"old_text": "top", "new_text": "pwned"}),
    (tools.make_directory, {}),
]


def _ids(cases):
    return [fn.__name__ for fn, _ in cases]


@pytest.fixture
def layout(workspace, outside):
    (workspace / "sub").mkdir()
    (workspace / "a").mkdir()
    (workspace / "inside.txt").write_text("inside\n")
    (workspace / "file_link").symlink_to(outside / "secret.txt")
    (workspace / "dir_link").symlink_to(outside, target_is_directory=True)
    (workspace / "dangling").symlink_to(outside / "not-yet-there.txt")
    (workspace / "sub" / "nested_dir_link").symlink_to(outside, target_is_directory=True)
    return workspace


def _snapshot(folder):
    return sorted(
        (str(p.relative_to(folder)), p.read_bytes() if p.is_file() else b"")
        for p in folder.rglob("*")
    )


def _refused(call, fn, extra, path):
    with pytest.raises(ToolError) as info:
        call(fn, path=path, **extra)
    return info.value


@pytest.mark.parametrize(("fn", "extra"), PATH_TOOLS, ids=_ids(PATH_TOOLS))
@pytest.mark.parametrize("path", ESCAPES)
def test_dotdot_and_absolute_paths_are_refused(layout, outside, call, fn, extra, path):
    before = _snapshot(outside)
    error = _refused(call, fn, extra, path)
    assert (error.code, error.status) == ("outside_workspace", 403)
    assert "outside the workspace" in error.user_message
    assert _snapshot(outside) == before


SYMLINK_ESCAPES = [
    "file_link",
    "dir_link/secret.txt",
    "dir_link",
    "sub/nested_dir_link/secret.txt",
    "dangling",
    "dir_link/new.txt",
    "sub/nested_dir_link/newdir/x",
]


# file_info describes a link itself rather than following it: covered separately.
SYMLINK_CASES = [
    pytest.param(fn, extra, path, id=f"{fn.__name__}-{path}")
    for fn, extra in PATH_TOOLS
    for path in SYMLINK_ESCAPES
    if not (fn is tools.file_info and path in ("file_link", "dir_link", "dangling"))
]


@pytest.mark.parametrize(("fn", "extra", "path"), SYMLINK_CASES)
def test_symlinks_leading_outside_are_refused(layout, outside, call, fn, extra, path):
    before = _snapshot(outside)
    error = _refused(call, fn, extra, path)
    assert (error.code, error.status) == ("outside_workspace", 403)
    assert _snapshot(outside) == before
    assert str(outside) not in error.user_message


def test_file_info_describes_a_link_out_without_following_it(layout, call):
    info = call(tools.file_info, path="file_link")
    assert info.type == "symlink"
    assert info.link_target is None
    assert info.binary is None


@pytest.mark.parametrize("fn", [tools.read_file, tools.file_info, tools.write_file])
def test_nul_byte_is_refused(layout, call, fn):
    extra = {"content": "x"} if fn is tools.write_file else {}
    error = _refused(call, fn, extra, "inside.txt\x00.png")
    assert (error.code, error.status) == ("invalid_path", 400)


@pytest.mark.parametrize(
    ("source", "destination"),
    [
        ("inside.txt", "../outside/moved.txt"),
        ("inside.txt", "/tmp/moved.txt"),
        ("inside.txt", "dir_link/moved.txt"),
        ("../outside/secret.txt", "stolen.txt"),
        ("dir_link/secret.txt", "stolen.txt"),
        ("inside.txt\x00", "x"),
    ],
)
def test_move_cannot_cross_the_root(layout, outside, call, source, destination):
    before = _snapshot(outside)
    with pytest.raises(ToolError) as info:
        call(tools.move_path, source=source, destination=destination)
    assert info.value.code in ("outside_workspace", "invalid_path")
    assert _snapshot(outside) == before
    assert (layout / "inside.txt").read_text() == "inside\n"
    assert not (layout / "stolen.txt").exists()


def test_moving_a_link_moves_the_link_not_its_target(layout, outside, call):
    call(tools.move_path, source="file_link", destination="renamed_link")
    assert os.readlink(layout / "renamed_link") == str(outside / "secret.txt")
    assert (outside / "secret.txt").read_text() == "top secret\n"
    with pytest.raises(ToolError):
        call(tools.read_file, path="renamed_link")


def test_search_does_not_follow_links_out(layout, call):
    result = call(tools.search_files, contains="secret")
    assert result.matches == []
    names = call(tools.search_files, pattern="*secret*")
    assert names.matches == []


def test_listing_shows_links_without_following(layout, call):
    listing = call(tools.list_directory)
    kinds = {e.name: e.type for e in listing.entries}
    assert kinds["dir_link"] == "symlink"
    assert kinds["file_link"] == "symlink"


def test_a_directory_swapped_for_a_link_after_the_check_is_refused(layout, outside):
    """The race: the path passes the check, then a parent is replaced by a symlink."""
    from toolpalette_files._workspace import Workspace

    ws = Workspace(os.path.realpath(layout))
    target = ws.resolve("sub/new.txt")
    (layout / "sub").rename(layout / "sub_moved")
    (layout / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError) as info:
        ws.open_file(target, os.O_WRONLY | os.O_CREAT)
    assert info.value.code == "outside_workspace"
    assert not (outside / "new.txt").exists()


def test_a_file_swapped_for_a_link_after_the_check_is_refused(layout, outside):
    from toolpalette_files._workspace import Workspace

    ws = Workspace(os.path.realpath(layout))
    target = ws.resolve("inside.txt")
    (layout / "inside.txt").unlink()
    (layout / "inside.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError) as info:
        ws.open_file(target, os.O_RDONLY)
    assert info.value.code == "outside_workspace"


def test_a_grandparent_swapped_for_a_link_after_the_check_is_refused(layout, outside):
    from toolpalette_files._workspace import Workspace

    (layout / "sub" / "deeper").mkdir()
    (outside / "deeper").mkdir()
    ws = Workspace(os.path.realpath(layout))
    target = ws.resolve("sub/deeper/new.txt")
    (layout / "sub").rename(layout / "sub_moved")
    (layout / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError) as info:
        ws.open_file(target, os.O_WRONLY | os.O_CREAT)
    assert info.value.code == "outside_workspace"
    assert not (outside / "deeper" / "new.txt").exists()
