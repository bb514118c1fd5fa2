"""The database operations behind the tools.

Parameters are always bound by SQLite (``?`` placeholders from a list, ``:name`` from
an object); no value is ever formatted into SQL text. The only identifiers this module
puts into SQL are table and index names read back from the database itself, quoted.
"""

from __future__ import annotations

import base64
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

__all__ = ["Params", "describe_table", "execute", "list_tables", "query"]

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


def _collect(cursor: sqlite3.Cursor, max_rows: int, *, drain: bool) -> Rows:
    columns = [d[0] for d in cursor.description or ()]
    rows = [[_cell(v) for v in row] for row in cursor.fetchmany(max_rows)]
    more = bool(columns) and cursor.fetchone() is not None
    while drain and more and cursor.fetchmany(_FETCH):
        pass  # step the statement to its end so that every change is made
    return Rows(columns=columns, rows=rows, row_count=len(rows), truncated=more)


def query(db: Database, sql: str, params: Params, max_rows: int, abort: threading.Event) -> Rows:
    """Run one read-only statement and return at most ``max_rows`` rows."""
    auth = read_only()
    with sql_errors(auth, abort), db.connect(auth, abort) as conn:
        return _collect(conn.execute(sql, _bind(params)), max_rows, drain=False)


def execute(
    db: Database, sql: str, params: Params, max_rows: int, abort: threading.Event
) -> ExecuteResult:
    """Run one statement that may change the database; it commits on its own."""
    auth = writable()
    with sql_errors(auth, abort), db.connect(auth, abort) as conn:
        cursor = conn.execute(sql, _bind(params))
        rows = _collect(cursor, max_rows, drain=True)
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
