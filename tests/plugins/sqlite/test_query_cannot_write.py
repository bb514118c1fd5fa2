"""Every way of writing through `query` is refused, and the database is unchanged."""

from __future__ import annotations

import sqlite3

import pytest
from toolpalette import ToolError
from toolpalette_sqlite import tools

WRITES = [
    "INSERT INTO books (title) VALUES ('injected')",
    "UPDATE books SET title = 'changed'",
    "DELETE FROM books",
    "DROP TABLE books",
    "DROP VIEW recent",
    "CREATE TABLE extra (x)",
    "CREATE TEMP TABLE scratch (x)",
    "CREATE INDEX more ON books (title)",
    "ALTER TABLE books ADD COLUMN extra TEXT",
    "REPLACE INTO authors (id, name) VALUES (1, 'x')",
    "INSERT INTO books (title) SELECT name FROM authors RETURNING id",
    "PRAGMA journal_mode = WAL",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA user_version = 5",
    "PRAGMA application_id = 7",
    "PRAGMA writable_schema = ON",
    "PRAGMA foreign_keys = OFF",
    "PRAGMA query_only = OFF",
    "VACUUM",
    "REINDEX",
    "ANALYZE",
    "BEGIN IMMEDIATE",
    "SELECT load_extension('/tmp/evil.so')",
    "SELECT fts3_tokenizer('simple', x'0000000000000000')",
]


@pytest.mark.parametrize("sql", WRITES)
def test_write_through_query_is_refused(call, database, digest, sql):
    before = digest(database)
    with pytest.raises(ToolError) as info:
        call(tools.query, sql=sql)
    assert (info.value.code, info.value.status) == ("read_only", 403)
    assert "execute" in info.value.user_message
    assert digest(database) == before


def test_attach_another_file_and_write_is_refused(call, database, digest, tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before, other_before = digest(database), digest(other)
    for sql in (
        f"ATTACH DATABASE '{other}' AS o",
        f"ATTACH DATABASE 'file:{other}?mode=rw' AS o",
        f"ATTACH DATABASE '{tmp_path / 'new.db'}' AS n",
        "INSERT INTO o.t VALUES (1)",
        f"VACUUM INTO '{tmp_path / 'copy.db'}'",
        "DETACH DATABASE main",
    ):
        with pytest.raises(ToolError) as info:
            call(tools.query, sql=sql)
        assert info.value.code in ("read_only", "sql_error"), sql
    assert digest(database) == before
    assert digest(other) == other_before
    assert not (tmp_path / "new.db").exists()
    assert not (tmp_path / "copy.db").exists()


def test_attach_error_names_what_was_refused(call, tmp_path):
    with pytest.raises(ToolError) as info:
        call(tools.query, sql=f"ATTACH DATABASE '{tmp_path / 'x.db'}' AS x")
    assert info.value.code == "read_only"
    assert "ATTACH" in info.value.user_message
    assert str(tmp_path) not in info.value.user_message


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; DROP TABLE books",
        "SELECT 1; INSERT INTO books (title) VALUES ('x')",
        "SELECT * FROM books; SELECT * FROM authors",
    ],
)
def test_several_statements_are_refused(call, database, digest, sql):
    before = digest(database)
    with pytest.raises(ToolError) as info:
        call(tools.query, sql=sql)
    assert (info.value.code, info.value.status) == ("multiple_statements", 400)
    assert digest(database) == before


def test_a_parameter_is_never_sql(call, database, digest):
    before = digest(database)
    result = call(tools.query, sql="SELECT ?", params=["1; DROP TABLE books"])
    assert result.rows == [["1; DROP TABLE books"]]
    assert digest(database) == before
