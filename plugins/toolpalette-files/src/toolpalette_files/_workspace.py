"""The workspace root, and how a path the model sends is confined to it."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PureWindowsPath
from typing import Any, Final

from toolpalette import ToolContext, ToolError

from toolpalette_files import ENV_ROOT
from toolpalette_files._models import Kind

__all__ = [
    "DirHandle",
    "Resolved",
    "Workspace",
    "kind_of",
    "os_errors",
    "refuse_outside",
    "refuse_special",
    "shown",
]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_DIR_FD: Final = os.open in os.supports_dir_fd and os.scandir in os.supports_fd
_SEPARATORS: Final = re.compile(r"[\\/]")
_SHOWN: Final = 200

_NOT_CONFIGURED: Final = (
    "The files tools have no workspace root configured. The host sets it with "
    '[tool.toolpalette.packs.files] root = "/path/to/workspace" (or '
    "ToolHub(config={'packs': {'files': {'root': ...}}})), or with the "
    f"{ENV_ROOT} environment variable."
)


def shown(path: str) -> str:
    """A path as the model sent it, quoted and shortened for a message."""
    text = path if len(path) <= _SHOWN else path[:_SHOWN] + "..."
    return repr(text)


def refuse_special(path: str) -> ToolError:
    """The refusal of a FIFO, socket or device: only regular files are read or written."""
    return ToolError(
        f"Path {shown(path)} is not a regular file (a FIFO, socket or device); these tools "
        "only open regular files.",
        code="not_file",
        status=400,
    )


def refuse_outside(path: str) -> ToolError:
    """The refusal for a path that leads outside the workspace."""
    return ToolError(
        f"Path {shown(path)} is outside the workspace. Paths are relative to the workspace "
        "root, may not be absolute, may not contain '..', and may not lead outside it "
        "through a symlink.",
        code="outside_workspace",
        status=403,
    )


@dataclass(frozen=True)
class Resolved:
    """A path checked to lie inside the workspace."""

    real: str
    """The absolute real path (symlinks resolved as asked)."""
    shown: str
    """The path relative to the root, in POSIX form (``.`` for the root itself)."""

    @property
    def parent(self) -> str:
        """The real path of the containing directory."""
        return os.path.dirname(self.real)

    @property
    def name(self) -> str:
        """The last component."""
        return os.path.basename(self.real)


@dataclass(frozen=True)
class DirHandle:
    """An open, verified directory; operations address entries relative to it."""

    path: str
    """The directory's real path."""
    fd: int | None
    """Its descriptor, or None on platforms without ``dir_fd`` support."""

    def at(self, name: str) -> tuple[str, dict[str, Any]]:
        """The (path, keyword arguments) pair that addresses ``name`` in this directory."""
        if self.fd is None:
            return os.path.join(self.path, name), {}
        return name, {"dir_fd": self.fd}

    def pair(self, name: str, key: str) -> tuple[str, dict[str, Any]]:
        """Like `at()`, for the ``src_dir_fd`` / ``dst_dir_fd`` of rename and replace."""
        if self.fd is None:
            return os.path.join(self.path, name), {}
        return name, {key: self.fd}


@dataclass(frozen=True)
class Workspace:
    """One workspace root; every path goes through `resolve()`."""

    root: str
    """The root's real path."""

    @classmethod
    def from_context(cls, ctx: ToolContext) -> Workspace:
        """The workspace the host configured for this call.

        Raises:
            ToolError: no root is configured, or it is not an existing directory.
        """
        raw = _configured_root(ctx.config)
        root = os.path.realpath(os.path.expanduser(os.fspath(raw)))
        if not os.path.isdir(root):
            raise ToolError(
                "The configured workspace root does not exist or is not a directory; "
                "the host must fix its files pack configuration.",
                code="not_configured",
                status=503,
            )
        return cls(root)

    def resolve(self, path: str, *, follow: bool = True) -> Resolved:
        """Check ``path`` and resolve it inside the root.

        Args:
            path: the path the model sent, relative to the root.
            follow: resolve a symlink in the last component too; when False the last
                component is kept as it is (to move or describe the link itself).

        Raises:
            ToolError: the path is malformed or leads outside the workspace.
        """
        _check_text(path)
        joined = os.path.normpath(os.path.join(self.root, path))
        if follow:
            real = os.path.realpath(joined)
        elif joined == self.root:
            real = self.root
        else:
            real = os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))
        if not self.contains(real):
            raise refuse_outside(path)
        return Resolved(real, self.show(real))

    def contains(self, real: str) -> bool:
        """Whether an absolute real path lies inside the root (or is the root)."""
        return os.path.commonpath([self.root, real]) == self.root

    def show(self, real: str) -> str:
        """A contained real path as the model sees it: relative, POSIX form."""
        rel = os.path.relpath(real, self.root)
        return rel.replace(os.sep, "/")

    @contextlib.contextmanager
    def directory(self, real_dir: str, shown_as: str) -> Iterator[DirHandle]:
        """Open a contained directory and verify where the descriptor really points.

        Raises:
            ToolError: the directory moved outside the workspace after it was checked.
        """
        if not _DIR_FD:
            if not self.contains(os.path.realpath(real_dir)):
                raise refuse_outside(shown_as)
            yield DirHandle(real_dir, None)
            return
        fd = _open_directory(real_dir, shown_as)
        try:
            self._verify(fd, real_dir, shown_as)
            yield DirHandle(real_dir, fd)
        finally:
            os.close(fd)

    def open_file(self, target: Resolved, flags: int, mode: int = 0o666) -> int:
        """Open a contained file, never following a symlink swapped into its place.

        Raises:
            ToolError: the file is missing, is a directory, or left the workspace.
        """
        if target.real == self.root:
            raise ToolError("The workspace root is a directory.", code="is_directory", status=400)
        with self.directory(target.parent, target.shown) as folder:
            name, kwargs = folder.at(target.name)
            with os_errors(target.shown):
                # Non-blocking, so a FIFO with no writer cannot hang the worker in open();
                # anything but a regular file or a directory is then refused unread.
                fd = os.open(name, flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, mode, **kwargs)
            try:
                with os_errors(target.shown):
                    kind = stat.S_IFMT(os.fstat(fd).st_mode)
                    if kind not in (stat.S_IFREG, stat.S_IFDIR):
                        raise refuse_special(target.shown)
                    if _NONBLOCK:
                        os.set_blocking(fd, True)
            except BaseException:
                os.close(fd)
                raise
            return fd

    def _verify(self, fd: int, expected: str, shown_as: str) -> None:
        actual = _fd_path(fd)
        if actual is None:
            same = os.path.samestat(os.fstat(fd), os.stat(expected))
            actual = os.path.realpath(expected) if same else None
        if actual is None or not self.contains(actual):
            raise refuse_outside(shown_as)


def _open_directory(real_dir: str, shown_as: str) -> int:
    try:
        return os.open(real_dir, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(real_dir):
            raise refuse_outside(shown_as) from exc  # swapped for a symlink since the check
        with os_errors(shown_as):
            raise


def _configured_root(config: Mapping[str, Any]) -> Any:
    raw = config.get("root") if config else None
    if raw is None or raw == "":
        raw = os.environ.get(ENV_ROOT)
    if not raw:
        raise ToolError(_NOT_CONFIGURED, code="not_configured", status=503)
    return raw


def _check_text(path: str) -> None:
    if "\x00" in path:
        raise ToolError(
            f"Path {shown(path.replace(chr(0), '?'))} contains a NUL byte.",
            code="invalid_path",
            status=400,
        )
    if os.path.isabs(path) or path.startswith(("/", "\\")) or PureWindowsPath(path).drive:
        raise refuse_outside(path)
    if ".." in _SEPARATORS.split(path):
        raise refuse_outside(path)


def _fd_path(fd: int) -> str | None:
    """Where an open descriptor really points, when the platform can tell."""
    proc = f"/proc/self/fd/{fd}"
    if os.path.islink(proc):
        return os.readlink(proc)
    if sys.platform == "darwin":  # pragma: no cover - exercised on macOS only
        import fcntl

        raw = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))
        return os.fsdecode(raw.split(b"\0", 1)[0])
    return None  # pragma: no cover - other platforms compare stat results instead


_ERRORS: Final[dict[int, tuple[str, int, str]]] = {
    errno.ENOENT: ("not_found", 404, "does not exist"),
    errno.EEXIST: ("exists", 409, "already exists"),
    errno.EISDIR: ("is_directory", 400, "is a directory"),
    errno.ENOTDIR: ("not_directory", 400, "is not a directory (or a part of it is not)"),
    errno.EACCES: ("permission_denied", 403, "is not accessible (permission denied)"),
    errno.EPERM: ("permission_denied", 403, "is not accessible (operation not permitted)"),
    errno.ELOOP: ("outside_workspace", 403, "is a symlink that may not be followed here"),
    errno.ENOTEMPTY: ("not_empty", 409, "is a directory that is not empty"),
    errno.ENOSPC: ("no_space", 507, "cannot be written: no space left on the device"),
    errno.EXDEV: ("cross_device", 409, "cannot be moved across file systems"),
    errno.EINVAL: ("invalid_path", 400, "cannot be used that way"),
    errno.ENXIO: ("not_file", 400, "is not a regular file (a FIFO, socket or device)"),
    errno.ENAMETOOLONG: ("invalid_path", 400, "has a name that is too long"),
}


@contextlib.contextmanager
def os_errors(path: str) -> Iterator[None]:
    """Turn an ``OSError`` into a `ToolError` that names the path the model sent."""
    try:
        yield
    except OSError as exc:
        code, status, what = _ERRORS.get(exc.errno or 0, ("io_error", 500, "could not be used"))
        raise ToolError(f"Path {shown(path)} {what}.", code=code, status=status) from exc


def kind_of(mode: int) -> Kind:
    """``file``, ``directory``, ``symlink`` or ``other``, from an ``st_mode``."""
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    return "other"
