"""What the sqlite tools return: pydantic models, so each tool publishes an output schema.

A BLOB cell is ``{"$blob": "<base64>"}``; an infinite float the string ``"Infinity"``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

__all__ = [
    "Column",
    "ExecuteResult",
    "ForeignKey",
    "Index",
    "Rows",
    "TableDescription",
    "TableList",
    "TableSummary",
]


class Rows(BaseModel):
    """The rows a statement returned, at most the row limit."""

    columns: list[str]
    """Column names, in result order."""
    rows: list[list[Any]]
    """One list of cells per row, in column order."""
    row_count: int
    """How many rows are in ``rows``."""
    truncated: bool
    """Whether the statement returned more rows than the limit."""


class ExecuteResult(Rows):
    """What a changing statement did (and any rows it returned, e.g. with RETURNING)."""

    rowcount: int
    """Rows inserted, updated or deleted; -1 for statements that change no rows."""
    lastrowid: int | None
    """The rowid of the last row inserted, when the statement inserted one."""


class TableSummary(BaseModel):
    """A table or view."""

    name: str
    """Its name."""
    type: Literal["table", "view"]
    """Whether it is a table or a view."""


class TableList(BaseModel):
    """The tables and views of the database, sorted by name."""

    tables: list[TableSummary]
    """Every table and view (SQLite's internal tables left out unless asked)."""


class Column(BaseModel):
    """One column of a table."""

    name: str
    """Its name."""
    type: str
    """Its declared type (may be empty: SQLite columns need none)."""
    not_null: bool
    """Whether it is declared NOT NULL."""
    default: str | None
    """The default value's SQL text, if any."""
    primary_key: int
    """Its position in the primary key (1-based), or 0 when not part of it."""


class Index(BaseModel):
    """One index of a table."""

    name: str
    """Its name."""
    unique: bool
    """Whether it enforces uniqueness."""
    columns: list[str]
    """The indexed columns, in order."""


class ForeignKey(BaseModel):
    """One foreign-key reference from this table."""

    column: str
    """The referencing column here."""
    table: str
    """The referenced table."""
    to: str | None
    """The referenced column (None: the referenced table's primary key)."""


class TableDescription(BaseModel):
    """A table's or view's structure."""

    name: str
    """Its name."""
    type: Literal["table", "view"]
    """Whether it is a table or a view."""
    sql: str | None
    """The CREATE statement that made it."""
    columns: list[Column]
    """Its columns, in order."""
    indexes: list[Index]
    """Its indexes."""
    foreign_keys: list[ForeignKey]
    """Its foreign-key references."""
    row_count: int | None
    """How many rows a table holds (None for a view)."""
