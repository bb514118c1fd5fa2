"""list_tables, describe_table and query on a real database file."""

from __future__ import annotations

import pytest
from toolpalette import InvalidInputError, ToolContext, ToolError
from toolpalette_sqlite import tools


def test_list_tables(call):
    result = call(tools.list_tables)
    assert [(t.name, t.type) for t in result.tables] == [
        ("authors", "table"),
        ("books", "table"),
        ("recent", "view"),
    ]


def test_describe_table(call):
    books = call(tools.describe_table, table="books")
    assert (books.name, books.type, books.row_count) == ("books", "table", 3)
    assert [(c.name, c.type, c.not_null, c.primary_key) for c in books.columns] == [
        ("id", "INTEGER", False, 1),
        ("title", "TEXT", True, 0),
        ("author_id", "INTEGER", False, 0),
        ("year", "INTEGER", False, 0),
        ("cover", "BLOB", False, 0),
    ]
    assert books.columns[3].default == "2000"
    assert [(i.name, i.unique, i.columns) for i in books.indexes] == [
        ("books_by_year", False, ["year", "title"])
    ]
    assert [(f.column, f.table, f.to) for f in books.foreign_keys] == [
        ("author_id", "authors", "id")
    ]
    assert books.sql.startswith("CREATE TABLE books")
    view = call(tools.describe_table, table="recent")
    assert (view.type, view.row_count, [c.name for c in view.columns]) == ("view", None, ["title"])


def test_describe_unknown_table_lists_the_tables(call):
    with pytest.raises(ToolError) as info:
        call(tools.describe_table, table='nope"; DROP TABLE books; --')
    assert (info.value.code, info.value.status) == ("not_found", 404)
    assert "authors, books, recent" in info.value.user_message


def test_describe_a_table_with_an_awkward_name(call, database):
    call(tools.execute, sql='CREATE TABLE "we""ird name" (x INTEGER)')
    result = call(tools.describe_table, table='we"ird name')
    assert (result.row_count, [c.name for c in result.columns]) == (0, ["x"])


def test_query_returns_structured_rows(call):
    result = call(
        tools.query,
        sql="SELECT title, year, cover FROM books WHERE author_id = ? ORDER BY year",
        params=[1],
    )
    assert result.columns == ["title", "year", "cover"]
    assert result.rows == [["The Lathe of Heaven", 1971, None], ["The Dispossessed", 1974, None]]
    assert (result.row_count, result.truncated) == (2, False)


def test_query_named_parameters_and_blobs(call):
    result = call(
        tools.query, sql="SELECT cover FROM books WHERE title = :t", params={"t": "Solaris"}
    )
    assert result.rows == [[{"$blob": "AP8="}]]


def test_query_row_limit(call):
    result = call(tools.query, sql="SELECT id FROM books ORDER BY id", max_rows=2)
    assert result.rows == [[1], [2]]
    assert (result.row_count, result.truncated) == (2, True)
    exact = call(tools.query, sql="SELECT id FROM books", max_rows=3)
    assert exact.truncated is False
    with pytest.raises(InvalidInputError):
        call(tools.query, sql="SELECT 1", max_rows=tools.MAX_ROWS + 1)
    assert tools.DEFAULT_ROWS == 100


def test_query_allows_reads_that_look_like_writes(call):
    recursive = call(
        tools.query,
        sql="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) "
        "SELECT sum(i) FROM n",
    )
    assert recursive.rows == [[15]]
    assert call(tools.query, sql="PRAGMA table_info(books)").row_count == 5
    assert call(tools.query, sql="PRAGMA user_version").rows == [[0]]
    assert call(tools.query, sql="EXPLAIN SELECT 1").row_count > 0
    assert call(tools.query, sql="SELECT 1 AS x; -- trailing comment").rows == [[1]]


def test_query_sql_errors_are_readable(call):
    with pytest.raises(ToolError) as info:
        call(tools.query, sql="SELEC 1")
    assert (info.value.code, info.value.status) == ("sql_error", 400)
    assert "syntax error" in info.value.user_message
    with pytest.raises(ToolError) as info:
        call(tools.query, sql="SELECT * FROM missing")
    assert "no such table" in info.value.user_message
    with pytest.raises(ToolError) as info:
        call(tools.query, sql="SELECT ?", params=[])
    assert info.value.code == "bad_parameters"


def test_query_is_interrupted_when_the_call_is_aborted(call, database):
    context = ToolContext(config={"database": str(database)})
    context.abort.set()
    with pytest.raises(ToolError) as info:
        call(
            tools.query,
            context,
            sql="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
            "SELECT count(*) FROM n",
        )
    assert (info.value.code, info.value.status) == ("interrupted", 504)


@pytest.fixture
def _no_env(monkeypatch):
    monkeypatch.delenv("TOOLPALETTE_SQLITE_DATABASE", raising=False)


@pytest.mark.usefixtures("_no_env")
def test_database_from_the_environment(call, database, monkeypatch):
    monkeypatch.setenv("TOOLPALETTE_SQLITE_DATABASE", str(database))
    assert call(tools.query, ToolContext(), sql="SELECT count(*) FROM books").rows == [[3]]


@pytest.mark.usefixtures("_no_env")
def test_unconfigured_is_refused_with_instructions(call):
    with pytest.raises(ToolError) as info:
        call(tools.list_tables, ToolContext())
    assert (info.value.code, info.value.status) == ("not_configured", 503)
    assert "[tool.toolpalette.packs.sqlite]" in info.value.user_message
    assert "TOOLPALETTE_SQLITE_DATABASE" in info.value.user_message


def test_missing_or_broken_database(call, tmp_path):
    missing = ToolContext(config={"database": str(tmp_path / "missing.db")})
    with pytest.raises(ToolError) as info:
        call(tools.query, missing, sql="SELECT 1")
    assert info.value.code == "database_unavailable"
    assert not (tmp_path / "missing.db").exists()
    (tmp_path / "junk.db").write_bytes(b"this is not a database" * 100)
    junk = ToolContext(config={"database": str(tmp_path / "junk.db")})
    with pytest.raises(ToolError) as info:
        call(tools.list_tables, junk)
    assert info.value.code == "database_unavailable"
    assert str(tmp_path) not in info.value.user_message


def test_a_running_query_stops_when_the_call_is_aborted(call, database):
    import threading
    import time

    context = ToolContext(config={"database": str(database)})
    timer = threading.Timer(0.2, context.abort.set)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(ToolError) as info:
            call(
                tools.query,
                context,
                sql="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                "SELECT count(*) FROM n",
            )
    finally:
        timer.cancel()
    assert info.value.code == "interrupted"
    assert time.monotonic() - started < 10


def test_a_locked_database_is_reported_busy(call, database):
    import sqlite3

    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        context = ToolContext(config={"database": str(database), "busy_timeout": 0.05})
        with pytest.raises(ToolError) as info:
            call(tools.execute, context, sql="DELETE FROM books")
        assert (info.value.code, info.value.status) == ("busy", 503)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("timeout", ["soon", -1, True])
def test_a_malformed_busy_timeout_is_a_configuration_error(call, database, timeout):
    context = ToolContext(config={"database": str(database), "busy_timeout": timeout})
    with pytest.raises(ToolError) as info:
        call(tools.list_tables, context)
    assert info.value.code == "not_configured"
