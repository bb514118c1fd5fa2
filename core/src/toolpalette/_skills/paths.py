"""Resource paths inside a skill folder: relative, forward-slashed, never escaping it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Traversable

__all__ = ["check_relpath", "inside", "walk_files"]

_DRIVE = re.compile(r"^[A-Za-z]:")
_SKIPPED = frozenset({"__pycache__", ".DS_Store"})


def check_relpath(relpath: str) -> str:
    """``relpath`` unchanged when it is a plain relative path inside a skill.

    Raises:
        ValueError: It is empty, absolute, has a drive letter, a backslash, a NUL, or an
            empty, ``.`` or ``..`` segment.
    """
    if not isinstance(relpath, str) or not relpath:
        raise ValueError("a skill resource path must be a non-empty string")
    if relpath.startswith("/") or _DRIVE.match(relpath) or "\\" in relpath or "\0" in relpath:
        raise ValueError(f"resource path {relpath!r} must be relative, with forward slashes")
    if any(part in ("", ".", "..") for part in relpath.split("/")):
        raise ValueError(f"resource path {relpath!r} must not have empty, '.' or '..' parts")
    return relpath


def inside(root: Traversable, node: Traversable) -> bool:
    """Whether ``node`` really lies inside ``root`` once symlinks are resolved.

    Only real file-system paths can hold symlinks; any other Traversable (a zip
    member) is inside by construction, since it was reached by joining plain names.
    """
    if not isinstance(root, Path) or not isinstance(node, Path):
        return True
    try:
        return node.resolve(strict=True).is_relative_to(root.resolve(strict=True))
    except (OSError, RuntimeError):
        return False


def walk_files(root: Traversable, skip: frozenset[str] = frozenset()) -> list[str]:
    """The relative paths of every file under ``root`` (sorted), staying inside it.

    Hidden entries, ``__pycache__``, names in ``skip`` (at the top level) and symlinks
    out of ``root`` are left out.
    """
    found: list[str] = []
    pending: list[tuple[Traversable, str]] = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        for child in folder.iterdir():
            name = child.name
            if name.startswith(".") or name in _SKIPPED or (not prefix and name in skip):
                continue
            if not inside(root, child):
                continue
            if child.is_dir():
                pending.append((child, f"{prefix}{name}/"))
            elif child.is_file():
                found.append(prefix + name)
    return sorted(found)
