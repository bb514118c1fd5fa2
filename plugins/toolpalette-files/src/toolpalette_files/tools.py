"""The files tools: four read-only, four mutating, all confined to one workspace root.

The root comes from the pack's configuration (``root``) or ``TOOLPALETTE_FILES_ROOT``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Hashable
from typing import Annotated, Any, Final

from pydantic import Field
from toolpalette import ToolContext, tool

from toolpalette_files import _impl, _search
from toolpalette_files._models import (
    DirectoryEntry,
    DirectoryListing,
    EditResult,
    FileChunk,
    FileInfo,
    MakeDirectoryResult,
    MoveResult,
    SearchMatch,
    SearchResult,
    WriteResult,
)
from toolpalette_files._workspace import Workspace

__all__ = [
    "TOOLS",
    "DirectoryEntry",
    "DirectoryListing",
    "EditResult",
    "FileChunk",
    "FileInfo",
    "MakeDirectoryResult",
    "MoveResult",
    "SearchMatch",
    "SearchResult",
    "WriteResult",
    "edit_file",
    "file_info",
    "list_directory",
    "make_directory",
    "move_path",
    "read_file",
    "search_files",
    "write_file",
]

DEFAULT_CHUNK: Final = 64 * 1024
"""Bytes `read_file` returns when no limit is given."""
MAX_CHUNK: Final = 256 * 1024
"""The most bytes one `read_file` call returns."""
MAX_EDIT_BYTES: Final = 8 * 1024 * 1024
"""The largest file `edit_file` rewrites."""
_OUTPUT_CAP: Final = 2 * 1024 * 1024


def _path_key(value: Any) -> Hashable:
    """Serialize mutating calls on the same path (as the model wrote it, normalized)."""
    path = str(getattr(value, "path", None) or getattr(value, "source", ""))
    return ("toolpalette-files", posixpath.normpath(path.replace("\\", "/")))


# -- read-only ------------------------------------------------------------------------


@tool(read_only=True, action_verb="Reading", output_cap=_OUTPUT_CAP)
def read_file(
    path: str,
    ctx: ToolContext,
    offset: Annotated[int, Field(ge=0)] = 0,
    limit: Annotated[int, Field(ge=1, le=MAX_CHUNK)] = DEFAULT_CHUNK,
) -> FileChunk:
    """Read a text file from the workspace, in chunks for large files.

    Returns up to `limit` bytes starting at byte `offset`, decoded as UTF-8, with the
    file's total `size` and the `next_offset` to pass to read the next chunk (null at
    the end of the file). Binary files are refused.

    Args:
        path: The file, relative to the workspace root.
        ctx: The call's context (not part of the input).
        offset: Byte offset to start at; use the `next_offset` of the previous chunk.
        limit: Most bytes to return (at most 262144).
    """
    ws = Workspace.from_context(ctx)
    return _impl.read_chunk(ws, ws.resolve(path), offset, limit)


@tool(read_only=True, action_verb="Listing")
def list_directory(
    ctx: ToolContext,
    path: str = ".",
    limit: Annotated[int, Field(ge=1, le=5000)] = 500,
) -> DirectoryListing:
    """List the entries of a workspace directory, sorted by name.

    Each entry has its name, its type (file, directory, symlink or other) and, for
    files, its size in bytes. Symlinks are listed, not followed.

    Args:
        ctx: The call's context (not part of the input).
        path: The directory, relative to the workspace root ("." is the root).
        limit: Most entries to return (at most 5000); `truncated` says if more exist.
    """
    ws = Workspace.from_context(ctx)
    return _impl.list_directory(ws, ws.resolve(path), limit)


@tool(read_only=True, action_verb="Searching")
def search_files(
    ctx: ToolContext,
    pattern: str | None = None,
    contains: str | None = None,
    path: str = ".",
    ignore_case: bool = False,
    limit: Annotated[int, Field(ge=1, le=1000)] = 100,
) -> SearchResult:
    """Find files in the workspace by name pattern, by text they contain, or both.

    With only `pattern`, each matching file is one match. With `contains`, each
    matching line is one match (path, line number, line text). Binary files and files
    over 2 MiB are not searched for text. Symlinked directories are not descended into.

    Args:
        ctx: The call's context (not part of the input).
        pattern: A glob such as `*.py`. Without a "/" it matches file names; with one,
            it matches the path relative to `path` ("*" also crosses "/").
        contains: Text to look for, line by line (a plain substring, not a regex).
        path: The directory to search, relative to the workspace root.
        ignore_case: Match `contains` without regard to case.
        limit: Most matches to return (at most 1000); `truncated` says if it stopped.
    """
    ws = Workspace.from_context(ctx)
    query = _search.Query(pattern, contains, ignore_case, limit, ctx.abort)
    return _search.search(ws, ws.resolve(path), query)


@tool(read_only=True, action_verb="Inspecting")
def file_info(path: str, ctx: ToolContext) -> FileInfo:
    """Describe a workspace path without reading it: type, size, modification time.

    For a symlink, the link itself is described and `link_target` says where it leads
    (null when that is outside the workspace or missing). For a file, `binary` says
    whether it looks binary (`read_file` refuses binary files).

    Args:
        path: The path, relative to the workspace root.
        ctx: The call's context (not part of the input).
    """
    ws = Workspace.from_context(ctx)
    return _impl.file_info(ws, ws.resolve(path, follow=False))


# -- mutating -------------------------------------------------------------------------


@tool(action_verb="Writing", concurrency_safe=True, resource_key=_path_key)
def write_file(path: str, content: str, ctx: ToolContext, overwrite: bool = True) -> WriteResult:
    """Write a text file in the workspace (UTF-8), replacing it atomically if it exists.

    The parent directory must exist (use `make_directory`). An existing file keeps its
    permissions.

    Args:
        path: The file, relative to the workspace root.
        content: The complete new text of the file.
        ctx: The call's context (not part of the input).
        overwrite: Replace an existing file; when false, an existing file is an error.
    """
    ws = Workspace.from_context(ctx)
    return _impl.write_text(ws, ws.resolve(path), content, overwrite=overwrite)


@tool(action_verb="Editing", concurrency_safe=True, resource_key=_path_key)
def edit_file(
    path: str,
    old_text: str,
    new_text: str,
    ctx: ToolContext,
    replace_all: bool = False,
) -> EditResult:
    """Edit a text file by replacing an exact piece of text.

    `old_text` must match the file exactly (whitespace and line breaks included) and,
    unless `replace_all` is true, occur exactly once: otherwise nothing changes and
    the error says how many times it occurs. Files must be valid UTF-8.

    Args:
        path: The file, relative to the workspace root.
        old_text: The exact text to replace (not empty).
        new_text: The text to put in its place (may be empty, to delete).
        ctx: The call's context (not part of the input).
        replace_all: Replace every occurrence instead of requiring exactly one.
    """
    ws = Workspace.from_context(ctx)
    target = ws.resolve(path)
    return _impl.edit_file(
        ws, target, old_text, new_text, replace_all=replace_all, max_bytes=MAX_EDIT_BYTES
    )


@tool(action_verb="Creating", concurrency_safe=True, resource_key=_path_key)
def make_directory(path: str, ctx: ToolContext, parents: bool = True) -> MakeDirectoryResult:
    """Make a directory in the workspace; an existing directory is not an error.

    Args:
        path: The directory, relative to the workspace root.
        ctx: The call's context (not part of the input).
        parents: Also make missing parent directories.
    """
    ws = Workspace.from_context(ctx)
    return _impl.make_directory(ws, path, parents=parents)


@tool(action_verb="Moving", resource_key=_path_key)
def move_path(
    source: str, destination: str, ctx: ToolContext, overwrite: bool = False
) -> MoveResult:
    """Move or rename a file or directory inside the workspace.

    `destination` is the new path itself, not a folder to move into. A symlink is
    moved as the link.

    Args:
        source: The path to move, relative to the workspace root.
        destination: Its new path, relative to the workspace root.
        ctx: The call's context (not part of the input).
        overwrite: Replace an existing file at `destination`; when false, that is an error.
    """
    ws = Workspace.from_context(ctx)
    return _impl.move_path(ws, source, destination, overwrite=overwrite)


TOOLS: Final = (
    read_file,
    list_directory,
    search_files,
    file_info,
    write_file,
    edit_file,
    make_directory,
    move_path,
)
"""Every tool of the pack, in the order the pack registers them."""
