"""First-party tools enforce their byte budgets while they work, not after.

``edit_file`` with ``replace_all`` turned 100 KB into 200 MB (the cap covered only the
read); ``query`` grew the host by hundreds of megabytes before its 413 (the cap applied
after fetching). Peak memory, measured with tracemalloc, now stays within a small
multiple of each budget.
"""

from __future__ import annotations

import sqlite3
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import toolpalette
from toolpalette import ToolContext
from toolpalette.testing import make_registry
from toolpalette_files import tools as files
from toolpalette_sqlite import tools as sql

OUTPUT_CAP = 2 * 1024 * 1024  # the sqlite pack's output cap


@pytest.fixture
def peak() -> Iterator[list[int]]:
    """The peak of Python allocations during the test body, in bytes."""
    tracemalloc.start()
    measured: list[int] = []
    try:
        yield measured
    finally:
        tracemalloc.stop()


def _peak_since_reset() -> int:
    return tracemalloc.get_traced_memory()[1]


async def _run(registry: Any, name: str, raw: dict[str, Any], context: ToolContext) -> Any:
    return await toolpalette.execute(registry, name, raw, context=context)


async def test_an_edit_whose_result_is_over_the_limit_is_refused_before_it_is_built(
    tmp_path: Path, peak: list[int]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.txt").write_text("a" * 100_000)
    registry = make_registry(files.edit_file)
    context = ToolContext(config={"root": str(root)})
    tracemalloc.reset_peak()
    result = await _run(
        registry,
        "edit_file",
        {"path": "big.txt", "old_text": "a", "new_text": "b" * 2_000, "replace_all": True},
        context,
    )
    used = _peak_since_reset()
    assert (result.status, result.code) == (413, "too_large"), result.text
    assert "200000000 bytes" in result.text
    assert (root / "big.txt").stat().st_size == 100_000  # untouched
    assert used < 4 * files.MAX_EDIT_BYTES


async def test_an_edit_within_the_limit_still_replaces_everywhere(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.txt").write_text("a-a-a")
    registry = make_registry(files.edit_file)
    context = ToolContext(config={"root": str(root)})
    result = await _run(
        registry,
        "edit_file",
        {"path": "f.txt", "old_text": "a", "new_text": "bb", "replace_all": True},
        context,
    )
    assert result.status == 200, result.text
    assert (root / "f.txt").read_text() == "bb-bb-bb"


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "budget.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(1000)])
    conn.commit()
    conn.close()
    return path


@pytest.mark.skipif(
    sys.version_info < (3, 11), reason="SQLite's length limit is settable from Python 3.11"
)
async def test_a_huge_value_fails_inside_sqlite_before_it_is_made(
    database: Path, peak: list[int]
) -> None:
    registry = make_registry(sql.query)
    context = ToolContext(config={"database": str(database)})
    tracemalloc.reset_peak()
    result = await _run(
        registry, "query", {"sql": "SELECT randomblob(40000000) FROM t LIMIT 5"}, context
    )
    used = _peak_since_reset()
    assert (result.status, result.code) == (413, "output_too_large"), result.text
    assert used < 4 * OUTPUT_CAP


async def test_many_rows_stop_at_the_budget_while_fetching(database: Path, peak: list[int]) -> None:
    registry = make_registry(sql.query, sql.execute)
    context = ToolContext(config={"database": str(database)})
    tracemalloc.reset_peak()
    result = await _run(
        registry, "query", {"sql": "SELECT randomblob(1000000) FROM t", "max_rows": 1000}, context
    )
    used = _peak_since_reset()
    assert (result.status, result.code) == (413, "output_too_large"), result.text
    assert used < 4 * OUTPUT_CAP  # 1000 rows of 1 MB were never all fetched
    tracemalloc.reset_peak()
    result = await _run(
        registry,
        "execute",
        {"sql": "UPDATE t SET x = x WHERE x < 50 RETURNING randomblob(100000)", "max_rows": 100},
        context,
    )
    assert (result.status, result.code) == (413, "output_too_large"), result.text
    assert _peak_since_reset() < 4 * OUTPUT_CAP


async def test_rows_within_the_budget_are_returned(database: Path) -> None:
    registry = make_registry(sql.query)
    context = ToolContext(config={"database": str(database)})
    result = await _run(registry, "query", {"sql": "SELECT x FROM t LIMIT 3"}, context)
    assert result.status == 200, result.text
    assert result.structured["rows"] == [[0], [1], [2]]  # type: ignore[index]
