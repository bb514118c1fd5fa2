"""What the files tools return: pydantic models, so each tool publishes an output schema."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

__all__ = [
    "DirectoryEntry",
    "DirectoryListing",
    "EditResult",
    "FileChunk",
    "FileInfo",
    "Kind",
    "MakeDirectoryResult",
    "MoveResult",
    "SearchMatch",
    "SearchResult",
    "WriteResult",
]

Kind = Literal["file", "directory", "symlink", "other"]
"""What a path is; symlinks are reported as such."""


class FileChunk(BaseModel):
    """One chunk of a text file."""

    path: str
    """The file, relative to the workspace root."""
    content: str
    """The chunk, decoded as UTF-8 (undecodable bytes become U+FFFD)."""
    offset: int
    """The byte offset the chunk starts at."""
    length: int
    """How many bytes of the file the chunk covers."""
    size: int
    """The file's total size in bytes."""
    next_offset: int | None
    """Where the next chunk starts; None when this chunk reaches the end of the file."""


class DirectoryEntry(BaseModel):
    """One entry of a directory."""

    name: str
    """The entry's name."""
    type: Kind
    """What it is; a symlink is reported as such, not followed."""
    size: int | None = None
    """The size in bytes, for regular files."""


class DirectoryListing(BaseModel):
    """The entries of one directory, sorted by name."""

    path: str
    """The directory, relative to the workspace root."""
    entries: list[DirectoryEntry]
    """The entries listed (at most the limit asked for)."""
    total: int
    """How many entries the directory holds."""
    truncated: bool
    """Whether entries were left out because of the limit."""


class SearchMatch(BaseModel):
    """One file whose name matched, or one line whose text matched."""

    path: str
    """The file, relative to the workspace root."""
    line: int | None = None
    """The 1-based line number, for a text match."""
    text: str | None = None
    """The matching line (shortened when very long), for a text match."""


class SearchResult(BaseModel):
    """What a search found."""

    matches: list[SearchMatch]
    """Matches in path order, then line order."""
    truncated: bool
    """Whether the search stopped at the result or file limit before finishing."""
    files_scanned: int
    """How many files were looked at."""
    files_skipped: int
    """Files whose text was not searched: binary, too large, or leading outside."""


class FileInfo(BaseModel):
    """What a path is, without reading it."""

    path: str
    """The path, relative to the workspace root."""
    type: Kind
    """What it is (a symlink is described as the link, see ``link_target``)."""
    size: int | None
    """The size in bytes, for files (the target's, for a symlink to a file)."""
    modified: str
    """Last modification time, ISO 8601 in UTC."""
    link_target: str | None = None
    """For a symlink: where it leads, relative to the root; None if outside or dangling."""
    binary: bool | None = None
    """For files: whether it looks binary (read_file refuses binary files)."""


class WriteResult(BaseModel):
    """A file written."""

    path: str
    """The file, relative to the workspace root."""
    bytes_written: int
    """Its new size in bytes (UTF-8)."""
    created: bool
    """Whether the file did not exist before."""


class EditResult(BaseModel):
    """A file edited in place."""

    path: str
    """The file, relative to the workspace root."""
    replacements: int
    """How many occurrences were replaced."""
    size: int
    """The file's new size in bytes."""


class MakeDirectoryResult(BaseModel):
    """A directory made (or found already there)."""

    path: str
    """The directory, relative to the workspace root."""
    created: bool
    """False when it already existed."""


class MoveResult(BaseModel):
    """A file or directory moved or renamed."""

    source: str
    """Where it was, relative to the workspace root."""
    destination: str
    """Where it is now."""
