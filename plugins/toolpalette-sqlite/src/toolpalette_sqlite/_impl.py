"""The database operations behind the tools: every value bound by SQLite, never formatted."""

from __future__ import annotations

import base64
import contextlib
import math
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

from toolpalette import ToolError

from toolpalette_sqlite._authorizer import read_only, writable
from toolpalette_sqlite._database import Database, sql_errors
from toolpalette_sqlite._models import (
    Column,
    ExecuteResult,
    ForeignKey,
    Index,
    Rows,
    TableDescription,
    TableList,
    TableSummary,
)

__all__ = ["Params", "describe_table", "execute", "list_tables", "query", "too_large"]

Scalar: TypeAlias = "str | int | float | bool | None"
Params: TypeAlias = "Sequence[Scalar] | Mapping[str, Scalar] | None"
_FETCH: Final = 256


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$blob": base64.b64encode(value).decode("ascii")}
    if isinstance(value, float) and math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _bind(params: Params) -> Sequence[Scalar] | Mapping[str, Scalar]:
    if params is None:
        return ()
    return params if isinstance(params, Mapping) else tuple(params)


def _size(value: Any) -> int:
    """About the bytes of JSON a cell becomes (a blob as base64); never less than its data."""
    if isinstance(value, bytes):
        return len(value) * 4 // 3 + 16
    if isinstance(value, str):
        return len(value) + 2
    return 24


def too_large(budget: int) -> ToolError:
    """The refusal of a result over ``budget`` bytes, raised while fetching, not after."""
    return ToolError(
        f"The result is larger than the {budget} bytes a call may return; select fewer "
        "rows or columns, or shorter values (substr(), length()).",
        code="output_too_large",
        status=413,
    )


def _collect(cursor: sqlite3.Cursor, max_rows: int, budget: int, *, drain: bool) -> Rows:
    """At most ``max_rows`` rows, fetched one at a time within ``budget`` bytes in all."""
    columns = [d[0] for d in cursor.description or ()]
    rows: list[list[Any]] = []
    spent = sum(len(name) for name in columns)
    while len(rows) < max_rows:
        row = cursor.fetchone()
        if row is None:
            break
        spent += sum(_size(value) for value in row)
        if spent > budget:
            raise too_large(budget)
        rows.append([_cell(v) for v in row])
    more = bool(columns) and len(rows) == max_rows and cursor.fetchone() is not None
    while drain and more and cursor.fetchmany(_FETCH):
        pass  # step the statement to its end so that every change is made
    return Rows(columns=columns, rows=rows, row_count=len(rows), truncated=more)


def query(
    db: Database, sql: str, params: Params, max_rows: int, abort: threading.Event, budget: int
) -> Rows:
    """Run one read-only statement and return at most ``max_rows`` rows (``budget`` bytes).

    No single value longer than ``budget`` is even made: SQLite refuses it (where this
    Python can set SQLite's length limit, 3.11 and later).
    """
    auth = read_only()
    with sql_errors(auth, abort, budget), db.connect(auth, abort, max_length=budget) as conn:
        cursor = conn.execute(sql, _bind(params))
        # Closed here, so a refusal's traceback cannot keep the statement (and the
        # connection's files) open after the connection is closed.
        with contextlib.closing(cursor):
            return _collect(cursor, max_rows, budget, drain=False)


def execute(
    db: Database, sql: str, params: Params, max_rows: int, abort: threading.Event, budget: int
) -> ExecuteResult:
    """Run one statement that may change the database; it commits on its own.

    Rows it returns (``RETURNING``) are held to ``budget`` bytes while fetched.
    """
    auth = writable()
    with sql_errors(auth, abort, budget), db.connect(auth, abort) as conn:
        cursor = conn.execute(sql, _bind(params))
        with contextlib.closing(cursor):
            rows = _collect(cursor, max_rows, budget, drain=True)
            changed = cursor.rowcount
            inserted = cursor.lastrowid if changed > 0 and cursor.lastrowid else None
    return ExecuteResult(**rows.model_dump(), rowcount=changed, lastrowid=inserted)


_TABLES: Final = (
    "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
    "AND (? OR name NOT LIKE 'sqlite\\_%' ESCAPE '\\') ORDER BY name"
)


def list_tables(db: Database, include_internal: bool, abort: threading.Event) -> TableList:
    """The tables and views, sorted by name."""
    auth = read_only()
    with sql_errors(auth, abort), db.connect(auth, abort) as conn:
        found = conn.execute(_TABLES, (include_internal,)).fetchall()
    return TableList(tables=[TableSummary(name=name, type=kind) for name, kind in found])


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def describe_table(db: Database, table: str, abort: threading.Event) -> TableDescription:
    """Columns, indexes, foreign keys, CREATE statement and row count of one table."""
    auth = read_only()
    with sql_errors(auth, abort), db.connect(auth, abort) as conn:
        found = conn.execute(
            "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name = ?",
            (table,),
        ).fetchone()
        if found is None:
            raise _no_such_table(conn, table)
        name, kind, sql = found
        quoted = _quote(name)
        count = None
        if kind == "table":
            count = conn.execute(f"SELECT count(*) FROM {quoted}").fetchone()[0]
        return TableDescription(
            name=name,
            type=kind,
            sql=sql,
            columns=_columns(conn, quoted),
            indexes=_indexes(conn, quoted),
            foreign_keys=_foreign_keys(conn, quoted),
            row_count=count,
        )


def _no_such_table(conn: sqlite3.Connection, table: str) -> ToolError:
    names = [row[0] for row in conn.execute(_TABLES, (False,)).fetchall()]
    listing = ", ".join(names[:100]) or "none"
    return ToolError(
        f"No table or view named {table[:200]!r}. Tables and views: {listing}",
        code="not_found",
        status=404,
    )


def _columns(conn: sqlite3.Connection, quoted: str) -> list[Column]:
    return [
        Column(name=name, type=kind, not_null=bool(notnull), default=default, primary_key=pk)
        for _, name, kind, notnull, default, pk in conn.execute(f"PRAGMA table_info({quoted})")
    ]


def _indexes(conn: sqlite3.Connection, quoted: str) -> list[Index]:
    indexes = []
    for row in conn.execute(f"PRAGMA index_list({quoted})").fetchall():
        index_name, unique = row[1], row[2]
        info = conn.execute(f"PRAGMA index_info({_quote(index_name)})").fetchall()
        columns = [col for _, _, col in info if col is not None]
        indexes.append(Index(name=index_name, unique=bool(unique), columns=columns))
    return indexes


def _foreign_keys(conn: sqlite3.Connection, quoted: str) -> list[ForeignKey]:
    return [
        ForeignKey(column=row[3], table=row[2], to=row[4])
        for row in conn.execute(f"PRAGMA foreign_key_list({quoted})")
    ]
