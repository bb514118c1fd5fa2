"""execute: one statement, bound parameters, rowcount and lastrowid."""

from __future__ import annotations

import sqlite3

import pytest
from toolpalette import ToolContext, ToolError
from toolpalette_sqlite import tools

HOSTILE = "'); DROP TABLE books;--"


def _rows(database, sql, params=()):
    conn = sqlite3.connect(database)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def test_insert_reports_rowcount_and_lastrowid(call, database):
    result = call(tools.execute, sql="INSERT INTO authors (name) VALUES (?)", params=["Butler"])
    assert (result.rowcount, result.lastrowid) == (1, 3)
    assert (result.columns, result.rows) == ([], [])
    assert _rows(database, "SELECT name FROM authors WHERE id = 3") == [("Butler",)]


def test_parameters_are_bound_not_formatted(call, database):
    call(tools.execute, sql="INSERT INTO books (title) VALUES (?)", params=[HOSTILE])
    call(
        tools.execute,
        sql="UPDATE authors SET name = :name WHERE id = :id",
        params={"name": HOSTILE, "id": 2},
    )
    assert _rows(database, "SELECT count(*) FROM books WHERE title = ?", (HOSTILE,)) == [(1,)]
    assert _rows(database, "SELECT name FROM authors WHERE id = 2") == [(HOSTILE,)]
    assert _rows(database, "SELECT count(*) FROM books") == [(4,)]  # the table is still there


def test_update_and_delete_rowcounts(call, database):
    updated = call(
        tools.execute, sql="UPDATE books SET year = year + 1 WHERE author_id = ?", params=[1]
    )
    assert (updated.rowcount, updated.lastrowid) == (2, None)
    deleted = call(tools.execute, sql="DELETE FROM books WHERE year < ?", params=[1970])
    assert deleted.rowcount == 1
    assert _rows(database, "SELECT count(*) FROM books") == [(2,)]


def test_returning_rows_with_a_limit(call, database):
    result = call(
        tools.execute,
        sql="UPDATE books SET year = 2024 RETURNING id",
        max_rows=2,
    )
    assert result.row_count == 2
    assert result.truncated is True
    assert result.rowcount == 3
    assert _rows(database, "SELECT DISTINCT year FROM books") == [(2024,)]  # all rows changed


def test_ddl_and_pragmas_are_allowed(call, database):
    created = call(tools.execute, sql="CREATE TABLE notes (body TEXT)")
    assert created.rowcount == -1
    call(tools.execute, sql="PRAGMA user_version = 5")
    assert _rows(database, "PRAGMA user_version") == [(5,)]


@pytest.mark.parametrize(
    ("sql", "code"),
    [
        ("INSERT INTO authors (name) VALUES ('a'); DROP TABLE books", "multiple_statements"),
        ("ATTACH DATABASE 'other.db' AS o", "not_allowed"),
        ("SELECT load_extension('x')", "not_allowed"),
        ("BEGIN", "not_allowed"),
        ("INSERT INTO authors (id, name) VALUES (1, 'dup')", "constraint"),
        ("INSERT INTO nowhere VALUES (1)", "sql_error"),
    ],
)
def test_refusals(call, database, digest, sql, code):
    before = digest(database)
    with pytest.raises(ToolError) as info:
        call(tools.execute, sql=sql)
    assert info.value.code == code
    assert digest(database) == before


def test_execute_never_creates_the_file_unless_configured(call, tmp_path):
    path = tmp_path / "new.db"
    context = ToolContext(config={"database": str(path)})
    with pytest.raises(ToolError) as info:
        call(tools.execute, context, sql="CREATE TABLE t (x)")
    assert info.value.code == "database_unavailable"
    assert not path.exists()
    creating = ToolContext(config={"database": str(path), "create": True})
    call(tools.execute, creating, sql="CREATE TABLE t (x)")
    assert _rows(path, "SELECT name FROM sqlite_master") == [("t",)]


def test_writes_serialize_on_the_database():
    from toolpalette.testing import as_provider

    provider = as_provider(tools.execute)
    first = provider.parse_input({"sql": "DELETE FROM a"})
    second = provider.parse_input({"sql": "DELETE FROM b"})
    assert provider.resource_key(first) == provider.resource_key(second) is not None
