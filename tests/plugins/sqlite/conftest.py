"""Fixtures for the sqlite pack: a real database file and a helper that runs a tool
through its provider as the hub would."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolpalette import ToolContext
from toolpalette.testing import run_tool

SCHEMA = """
CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE books (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author_id INTEGER REFERENCES authors(id),
    year INTEGER DEFAULT 2000,
    cover BLOB
);
CREATE INDEX books_by_year ON books (year, title);
CREATE VIEW recent AS SELECT title FROM books WHERE year >= 2000;
INSERT INTO authors (id, name) VALUES (1, 'Le Guin'), (2, 'Lem');
INSERT INTO books (title, author_id, year, cover) VALUES
    ('The Dispossessed', 1, 1974, NULL),
    ('Solaris', 2, 1961, x'00ff'),
    ('The Lathe of Heaven', 1, 1971, NULL);
"""


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "library.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def ctx(database: Path) -> ToolContext:
    return ToolContext(config={"database": str(database)})


@pytest.fixture
def call(ctx: ToolContext) -> Callable[..., Any]:
    """Run a tool through its provider: parse the input, create, invoke."""

    def run(fn: Any, context: ToolContext | None = None, **raw: Any) -> Any:
        return run_tool(fn, raw, context=context or ctx)

    return run


@pytest.fixture
def digest() -> Callable[[Path], str]:
    """The SHA-256 of a file's bytes (and of its journal files, if any)."""

    def run(path: Path) -> str:
        h = hashlib.sha256()
        for suffix in ("", "-journal", "-wal", "-shm"):
            part = Path(f"{path}{suffix}")
            h.update(part.read_bytes() if part.exists() else b"<absent>")
        return h.hexdigest()

    return run
