"""The pack behind a real hub and executor: the host's configuration reaches the tools."""

from __future__ import annotations

from toolpalette import Executor, ToolContext, ToolHub
from toolpalette_sqlite import hooks


def _executor(database):
    hub = ToolHub(autoload=False, config={"packs": {"sqlite": {"database": str(database)}}})
    hub.add_plugin(hooks, name="sqlite")
    return Executor(hub.catalog(), config_for=lambda p: hub.pack_config(p.origin.pack))


async def test_configured_database_reaches_the_tools(database, monkeypatch):
    monkeypatch.delenv("TOOLPALETTE_SQLITE_DATABASE", raising=False)
    executor = _executor(database)
    result = await executor.execute(
        "query", {"sql": "SELECT name FROM authors ORDER BY id"}, context=ToolContext()
    )
    assert not result.is_error
    assert result.structured["rows"] == [["Le Guin"], ["Lem"]]


async def test_a_refused_write_reaches_the_model_as_a_tool_error(database, digest):
    before = digest(database)
    executor = _executor(database)
    result = await executor.execute("query", {"sql": "DELETE FROM books"}, context=ToolContext())
    assert (result.is_error, result.status, result.code) == (True, 403, "read_only")
    assert digest(database) == before
