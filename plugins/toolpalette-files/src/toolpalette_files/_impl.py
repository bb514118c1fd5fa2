"""The file operations behind the tools; every path arrives already confined."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from datetime import datetime, timezone
from typing import Final

from toolpalette import ToolError

from toolpalette_files._models import (
    DirectoryEntry,
    DirectoryListing,
    EditResult,
    FileChunk,
    FileInfo,
    MakeDirectoryResult,
    MoveResult,
    WriteResult,
)
from toolpalette_files._workspace import (
    DirHandle,
    Resolved,
    Workspace,
    kind_of,
    os_errors,
    refuse_special,
)

__all__ = [
    "SNIFF",
    "read_at",
    "edit_file",
    "file_info",
    "is_binary",
    "list_directory",
    "make_directory",
    "move_path",
    "read_chunk",
    "read_text",
    "write_text",
]

SNIFF: Final = 8192
"""How many leading bytes decide whether a file is binary."""


def is_binary(head: bytes) -> bool:
    """Whether bytes look binary: they contain a NUL byte."""
    return b"\x00" in head


def _refuse_binary(target: Resolved) -> ToolError:
    return ToolError(
        f"{target.shown!r} is a binary file; these tools read and edit text files only.",
        code="binary_file",
        status=415,
    )


def _complete_end(data: bytes) -> int:
    """The length of ``data`` without a multi-byte UTF-8 character cut at its end."""
    end = len(data)
    for back in range(1, min(4, end) + 1):
        byte = data[end - back]
        if byte & 0xC0 == 0x80:
            continue
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return end - back if need > back else end
        return end
    return end


def read_at(fd: int, offset: int, size: int) -> bytes:
    """Up to ``size`` bytes from ``offset`` (fewer only at the end of the file)."""
    os.lseek(fd, offset, os.SEEK_SET)
    parts: list[bytes] = []
    while size > 0:
        block = os.read(fd, size)
        if not block:
            break
        parts.append(block)
        size -= len(block)
    return b"".join(parts)


def read_chunk(ws: Workspace, target: Resolved, offset: int, limit: int) -> FileChunk:
    """Read up to ``limit`` bytes of a text file from byte ``offset``."""
    fd = ws.open_file(target, os.O_RDONLY)
    try:
        with os_errors(target.shown):
            size = _regular_size(fd, target)
            if is_binary(read_at(fd, 0, SNIFF)):
                raise _refuse_binary(target)
            data = read_at(fd, min(offset, size), limit)
    finally:
        os.close(fd)
    if is_binary(data):
        raise _refuse_binary(target)
    start = min(offset, size)
    if start + len(data) < size:
        data = data[: _complete_end(data) or len(data)]
    end = start + len(data)
    return FileChunk(
        path=target.shown,
        content=data.decode("utf-8", errors="replace"),
        offset=start,
        length=len(data),
        size=size,
        next_offset=end if end < size else None,
    )


def _regular_size(fd: int, target: Resolved) -> int:
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(
            f"{target.shown!r} is a directory; use list_directory.",
            code="is_directory",
            status=400,
        )
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{target.shown!r} is not a regular file.", code="not_file", status=400)
    return info.st_size


def read_text(ws: Workspace, target: Resolved, max_bytes: int) -> str:
    """A whole text file, decoded strictly as UTF-8 (for edits, nothing may be lost)."""
    fd = ws.open_file(target, os.O_RDONLY)
    try:
        with os_errors(target.shown):
            size = _regular_size(fd, target)
            if size > max_bytes:
                raise ToolError(
                    f"{target.shown!r} is too large to edit ({size} bytes; the limit is "
                    f"{max_bytes}).",
                    code="too_large",
                    status=413,
                )
            data = read_at(fd, 0, size)
    finally:
        os.close(fd)
    if is_binary(data):
        raise _refuse_binary(target)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"{target.shown!r} is not valid UTF-8 text, so it cannot be edited safely.",
            code="not_utf8",
            status=415,
        ) from None


def write_text(ws: Workspace, target: Resolved, text: str, *, overwrite: bool) -> WriteResult:
    """Write ``text`` atomically (temporary file, then replace)."""
    data = text.encode("utf-8")
    with ws.directory(target.parent, target.shown) as folder:
        existing = _lstat(folder, target.name)
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise ToolError(f"{target.shown!r} is a directory.", code="is_directory", status=400)
        if existing is not None and kind_of(existing.st_mode) == "other":
            raise refuse_special(target.shown)
        if existing is not None and not overwrite:
            raise ToolError(
                f"{target.shown!r} already exists; pass overwrite=true to replace it.",
                code="exists",
                status=409,
            )
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else None
        _replace_with(folder, target, data, mode)
    return WriteResult(path=target.shown, bytes_written=len(data), created=existing is None)


def _lstat(folder: DirHandle, name: str) -> os.stat_result | None:
    path, kwargs = folder.at(name)
    try:
        return os.stat(path, follow_symlinks=False, **kwargs)
    except FileNotFoundError:
        return None


def _replace_with(folder: DirHandle, target: Resolved, data: bytes, mode: int | None) -> None:
    temp = f".{target.name[:64]}.{secrets.token_hex(6)}.tmp"
    path, kwargs = folder.at(temp)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os_errors(target.shown):
        fd = os.open(path, flags, 0o666, **kwargs)
        try:
            try:
                if mode is not None and hasattr(os, "fchmod"):
                    os.fchmod(fd, mode)
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            src, src_kw = folder.pair(temp, "src_dir_fd")
            dst, dst_kw = folder.pair(target.name, "dst_dir_fd")
            os.replace(src, dst, **src_kw, **dst_kw)
        except BaseException:
            _unlink_quietly(folder, temp)
            raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _unlink_quietly(folder: DirHandle, name: str) -> None:
    path, kwargs = folder.at(name)
    with contextlib.suppress(OSError):
        os.unlink(path, **kwargs)


def edit_file(
    ws: Workspace, target: Resolved, old: str, new: str, *, replace_all: bool, max_bytes: int
) -> EditResult:
    """Replace an exact text: once (it must occur exactly once) or everywhere."""
    if not old:
        raise ToolError("old_text may not be empty.", code="invalid_edit", status=400)
    text = read_text(ws, target, max_bytes)
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_text does not occur in {target.shown!r}; it must match the file exactly, "
            "whitespace and line breaks included. Read the file again and copy the text.",
            code="no_match",
            status=422,
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_text occurs {count} times in {target.shown!r}; include more surrounding "
            "text so that it occurs exactly once, or pass replace_all=true.",
            code="ambiguous_match",
            status=422,
        )
    # The result's size is known before it is built: an edit never makes a file
    # larger than the edit limit, nor holds more than that in memory.
    size = len(text.encode("utf-8")) + count * (len(new.encode("utf-8")) - len(old.encode("utf-8")))
    if size > max_bytes:
        raise ToolError(
            f"The edit would make {target.shown!r} {size} bytes; the limit is {max_bytes}. "
            "Replace fewer occurrences or shorter text.",
            code="too_large",
            status=413,
        )
    result = write_text(ws, target, text.replace(old, new), overwrite=True)
    return EditResult(path=target.shown, replacements=count, size=result.bytes_written)


def list_directory(ws: Workspace, target: Resolved, limit: int) -> DirectoryListing:
    """The entries of a directory, sorted by name, at most ``limit`` of them."""
    entries: list[DirectoryEntry] = []
    with ws.directory(target.real, target.shown) as folder, os_errors(target.shown):
        with os.scandir(folder.fd if folder.fd is not None else folder.path) as scan:
            found = sorted(scan, key=lambda entry: entry.name)
        for entry in found[:limit]:
            info = entry.stat(follow_symlinks=False)
            kind = kind_of(info.st_mode)
            size = info.st_size if kind == "file" else None
            entries.append(DirectoryEntry(name=entry.name, type=kind, size=size))
    return DirectoryListing(
        path=target.shown, entries=entries, total=len(found), truncated=len(found) > limit
    )


def file_info(ws: Workspace, target: Resolved) -> FileInfo:
    """Describe a path (the link itself, for a symlink) without reading it."""
    info = _lstat_checked(ws, target)
    kind = kind_of(info.st_mode)
    link_target: str | None = None
    size = info.st_size if kind == "file" else None
    binary: bool | None = None
    if kind == "symlink":
        followed = os.path.realpath(target.real)
        if ws.contains(followed) and os.path.exists(followed):
            link_target = ws.show(followed)
            if os.path.isfile(followed):
                size = os.path.getsize(followed)
    elif kind == "file":
        binary = _sniff(ws, target)
    modified = datetime.fromtimestamp(info.st_mtime, tz=timezone.utc).isoformat()
    return FileInfo(
        path=target.shown,
        type=kind,
        size=size,
        modified=modified,
        link_target=link_target,
        binary=binary,
    )


def _lstat_checked(ws: Workspace, target: Resolved) -> os.stat_result:
    if target.real == ws.root:
        return os.stat(ws.root)
    with ws.directory(target.parent, target.shown) as folder, os_errors(target.shown):
        path, kwargs = folder.at(target.name)
        return os.stat(path, follow_symlinks=False, **kwargs)


def _sniff(ws: Workspace, target: Resolved) -> bool:
    fd = ws.open_file(target, os.O_RDONLY)
    try:
        return is_binary(read_at(fd, 0, SNIFF))
    finally:
        os.close(fd)


def make_directory(ws: Workspace, path: str, *, parents: bool) -> MakeDirectoryResult:
    """Make a directory, and its missing parents when ``parents`` is true."""
    target = ws.resolve(path)
    if os.path.isdir(target.real):
        return MakeDirectoryResult(path=target.shown, created=False)
    steps = [target]
    if parents:
        parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
        steps = [ws.resolve("/".join(parts[:i])) for i in range(1, len(parts) + 1)]
    for step in steps:
        if os.path.isdir(step.real):
            continue
        with ws.directory(step.parent, step.shown) as folder, os_errors(step.shown):
            name, kwargs = folder.at(step.name)
            os.mkdir(name, **kwargs)
    return MakeDirectoryResult(path=target.shown, created=True)


def move_path(ws: Workspace, source: str, destination: str, *, overwrite: bool) -> MoveResult:
    """Move or rename a file or directory (a symlink is moved as the link itself)."""
    src = ws.resolve(source, follow=False)
    dst = ws.resolve(destination, follow=False)
    if ws.root in (src.real, dst.real):
        raise ToolError(
            "The workspace root itself cannot be moved.", code="invalid_move", status=400
        )
    if ws.contains(dst.real) and os.path.commonpath([src.real, dst.real]) == src.real:
        raise ToolError(
            f"{dst.shown!r} is inside {src.shown!r}; a directory cannot move into itself.",
            code="invalid_move",
            status=400,
        )
    with (
        ws.directory(src.parent, src.shown) as src_dir,
        ws.directory(dst.parent, dst.shown) as dst_dir,
    ):
        if _lstat(src_dir, src.name) is None:
            raise ToolError(f"{src.shown!r} does not exist.", code="not_found", status=404)
        if _lstat(dst_dir, dst.name) is not None and not overwrite:
            raise ToolError(
                f"{dst.shown!r} already exists; pass overwrite=true to replace it.",
                code="exists",
                status=409,
            )
        old, old_kw = src_dir.pair(src.name, "src_dir_fd")
        new, new_kw = dst_dir.pair(dst.name, "dst_dir_fd")
        with os_errors(dst.shown):
            os.replace(old, new, **old_kw, **new_kw)
    return MoveResult(source=src.shown, destination=dst.shown)
