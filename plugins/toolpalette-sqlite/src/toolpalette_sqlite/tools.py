"""The sqlite tools: three read-only, one mutating, all on the database the host configured.

The path comes from the pack's configuration (``database``) or ``TOOLPALETTE_SQLITE_DATABASE``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Annotated, Any, Final, TypeAlias

from pydantic import Field
from toolpalette import ToolContext, tool

from toolpalette_sqlite import _impl
from toolpalette_sqlite._database import Database
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

__all__ = [
    "DEFAULT_ROWS",
    "MAX_ROWS",
    "TOOLS",
    "Column",
    "ExecuteResult",
    "ForeignKey",
    "Index",
    "Rows",
    "TableDescription",
    "TableList",
    "TableSummary",
    "describe_table",
    "execute",
    "list_tables",
    "query",
]

DEFAULT_ROWS: Final = 100
"""Rows returned when no limit is given."""
MAX_ROWS: Final = 1000
"""The most rows one call returns."""
_OUTPUT_CAP: Final = 2 * 1024 * 1024

Scalar: TypeAlias = "str | int | float | bool | None"
RowLimit: TypeAlias = Annotated[int, Field(ge=1, le=MAX_ROWS)]


def _database_key(value: Any) -> Hashable:
    """Writes to the one configured database run one at a time."""
    return "toolpalette-sqlite"


@tool(read_only=True, action_verb="Listing tables")
def list_tables(ctx: ToolContext, include_internal: bool = False) -> TableList:
    """List the tables and views of the database, sorted by name.

    Args:
        ctx: The call's context (not part of the input).
        include_internal: Also list SQLite's own tables (named sqlite_...).
    """
    return _impl.list_tables(Database.from_context(ctx), include_internal, ctx.abort)


@tool(read_only=True, action_verb="Describing")
def describe_table(table: str, ctx: ToolContext) -> TableDescription:
    """Describe a table or view: columns, indexes, foreign keys, CREATE statement, row count.

    Args:
        table: The table or view name, exactly as `list_tables` gives it (not quoted).
        ctx: The call's context (not part of the input).
    """
    return _impl.describe_table(Database.from_context(ctx), table, ctx.abort)


@tool(read_only=True, action_verb="Querying", output_cap=_OUTPUT_CAP)
def query(
    sql: str,
    ctx: ToolContext,
    params: list[Scalar] | dict[str, Scalar] | None = None,
    max_rows: RowLimit = DEFAULT_ROWS,
) -> Rows:
    """Run one read-only SQL statement (SELECT, WITH, EXPLAIN, or a reporting PRAGMA).

    Returns the column names and at most `max_rows` rows; `truncated` is true when the
    statement returned more. Anything that would change the database is refused
    (use `execute`), as are ATTACH and several statements in one call. Put values in
    `params` instead of writing them into the SQL. BLOB cells come back as
    {"$blob": "<base64>"}.

    Args:
        sql: One SQL statement; use ? placeholders (or :name ones) for values.
        ctx: The call's context (not part of the input).
        params: Values for the placeholders: a list for ?, an object for :name.
        max_rows: Most rows to return (at most 1000).
    """
    db = Database.from_context(ctx)
    return _impl.query(db, sql, params, max_rows, ctx.abort, _OUTPUT_CAP)


@tool(action_verb="Executing", output_cap=_OUTPUT_CAP, resource_key=_database_key)
def execute(
    sql: str,
    ctx: ToolContext,
    params: list[Scalar] | dict[str, Scalar] | None = None,
    max_rows: RowLimit = DEFAULT_ROWS,
) -> ExecuteResult:
    """Run one SQL statement that changes the database (INSERT, UPDATE, DELETE, CREATE...).

    The statement commits on its own. Returns `rowcount` (rows changed), `lastrowid`
    (for an INSERT) and any rows it returned (with RETURNING). Always pass values in
    `params`, never inside the SQL text. ATTACH, DETACH, extensions and transaction
    control (BEGIN, COMMIT, SAVEPOINT) are refused.

    Args:
        sql: One SQL statement; use ? placeholders (or :name ones) for values.
        ctx: The call's context (not part of the input).
        params: Values for the placeholders: a list for ?, an object for :name.
        max_rows: Most returned rows to include (at most 1000).
    """
    db = Database.from_context(ctx)
    return _impl.execute(db, sql, params, max_rows, ctx.abort, _OUTPUT_CAP)


TOOLS: Final = (list_tables, describe_table, query, execute)
"""Every tool of the pack, in the order the pack registers them."""
