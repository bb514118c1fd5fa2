"""Where MCP tasks are kept: a small protocol, and stores in memory, SQLite and Redis."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "MemoryTaskStore",
    "RedisTaskStore",
    "SqliteTaskStore",
    "TaskStore",
    "task_store",
]

Versioned = tuple[dict[str, Any], int]
"""A record and its version."""


@runtime_checkable
class TaskStore(Protocol):
    """Where a server's MCP tasks are kept: implement it to keep them somewhere else.

    Each record is a JSON object, replaced only at the version read (compare and set),
    so any number of workers, on any machines, may change one task at once and none of
    their changes is lost. ``expires`` is the wall-clock time (seconds since the epoch)
    after which a record may be forgotten; a store never returns a record past it. The
    stores here ([`MemoryTaskStore`][toolpalette.mcp.MemoryTaskStore],
    [`SqliteTaskStore`][toolpalette.mcp.SqliteTaskStore],
    [`RedisTaskStore`][toolpalette.mcp.RedisTaskStore]) cover one process, one machine
    and many machines.
    """

    async def create(self, task_id: str, record: dict[str, Any], expires: float) -> None:
        """Keep a new record at version 1 (the id is new: ids are random)."""
        ...

    async def load(self, task_id: str) -> Versioned | None:
        """The record and its version, or None (unknown or expired)."""
        ...

    async def replace(
        self, task_id: str, record: dict[str, Any], version: int, expires: float
    ) -> bool:
        """Replace the record if its version is still ``version``; whether it was."""
        ...

    async def close(self) -> None:
        """Release what the store holds (connections); a later operation opens again.

        The server calls it when it stops.
        """
        ...


class MemoryTaskStore:
    """Tasks in this process's memory: the default, for one worker or stdio.

    Nothing else sees them, and they are gone when the process ends: a deployment of
    several workers needs [`SqliteTaskStore`][toolpalette.mcp.SqliteTaskStore] or
    [`RedisTaskStore`][toolpalette.mcp.RedisTaskStore].
    """

    def __init__(self) -> None:
        self._records: dict[str, tuple[str, int, float]] = {}
        self._lock = threading.Lock()

    async def create(self, task_id: str, record: dict[str, Any], expires: float) -> None:
        now = time.time()
        with self._lock:
            for key in [k for k, v in self._records.items() if v[2] <= now]:
                del self._records[key]
            self._records[task_id] = (json.dumps(record), 1, expires)

    async def load(self, task_id: str) -> Versioned | None:
        with self._lock:
            found = self._records.get(task_id)
        if found is None or found[2] <= time.time():
            return None
        return json.loads(found[0]), found[1]

    async def replace(
        self, task_id: str, record: dict[str, Any], version: int, expires: float
    ) -> bool:
        with self._lock:
            found = self._records.get(task_id)
            if found is None or found[1] != version:
                return False
            self._records[task_id] = (json.dumps(record), version + 1, expires)
            return True

    async def close(self) -> None:
        return None


_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS tasks ("
    "id TEXT PRIMARY KEY, version INTEGER NOT NULL, expires REAL NOT NULL, body TEXT NOT NULL)"
)


class SqliteTaskStore:
    """Tasks in one SQLite file (WAL): for the workers of one machine (``--workers N``).

    Any worker answers for any task, and a finished task survives a restart. Each
    operation opens its own connection in a thread (closed after it), so the store is
    safe from any thread and any process that opens the same file; it needs nothing
    beyond the standard library. One more connection is held open, unused, until
    `close()`: without it each operation's connection would be the file's last, whose
    close checkpoints the WAL to disk (a sync, some 20 ms, on every change).

    Args:
        path: the database file (made, with its folder, if missing).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        """The database file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(self._connect()) as db, db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
        self._held: sqlite3.Connection | None = None
        self._holding = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        db.execute("PRAGMA busy_timeout=10000")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across a crashed process
        return db

    def _run(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        if self._held is None:
            with self._holding:
                if self._held is None:  # keeps the WAL open between operations
                    held = sqlite3.connect(self.path, check_same_thread=False)
                    held.execute("SELECT 1 FROM tasks LIMIT 0").fetchall()  # opens the file
                    self._held = held
        with contextlib.closing(self._connect()) as db:
            return work(db)

    async def create(self, task_id: str, record: dict[str, Any], expires: float) -> None:
        body = json.dumps(record)

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM tasks WHERE expires <= ?", (time.time(),))
            db.execute(
                "INSERT INTO tasks (id, version, expires, body) VALUES (?, 1, ?, ?)",
                (task_id, expires, body),
            )

        await asyncio.to_thread(self._run, work)

    async def load(self, task_id: str) -> Versioned | None:
        def work(db: sqlite3.Connection) -> Any:
            return db.execute(
                "SELECT body, version FROM tasks WHERE id = ? AND expires > ?",
                (task_id, time.time()),
            ).fetchone()

        row = await asyncio.to_thread(self._run, work)
        return None if row is None else (json.loads(row[0]), int(row[1]))

    async def replace(
        self, task_id: str, record: dict[str, Any], version: int, expires: float
    ) -> bool:
        body = json.dumps(record)

        def work(db: sqlite3.Connection) -> bool:
            done = db.execute(
                "UPDATE tasks SET body = ?, version = version + 1, expires = ? "
                "WHERE id = ? AND version = ?",
                (body, expires, task_id, version),
            )
            return done.rowcount == 1

        return bool(await asyncio.to_thread(self._run, work))

    async def close(self) -> None:
        with self._holding:
            held, self._held = self._held, None
        if held is not None:
            held.close()


_REPLACE: Final = """
if redis.call('HGET', KEYS[1], 'v') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'v', ARGV[2], 'b', ARGV[3])
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  return 1
end
return 0
"""


class RedisTaskStore:
    """Tasks in Redis or Valkey: for the workers of several machines.

    Needs ``pip install 'toolpalette[redis]'``. Each record is a hash (``v``: version,
    ``b``: the JSON) under ``prefix + id``, set to expire with the task (Redis forgets
    it itself); a replacement is one Lua script (atomic).

    Args:
        url: the server, as redis-py takes it (``redis://HOST:PORT/DB``,
            ``rediss://...``, ``unix://...``).
        prefix: the keys' prefix: deployments sharing one database each need their own.

    Raises:
        ValueError: redis-py is not installed.
    """

    def __init__(self, url: str, *, prefix: str = "toolpalette:task:") -> None:
        try:
            import redis.asyncio as redis_asyncio
        except ImportError as exc:  # pragma: no cover - the extra is missing
            raise ValueError(
                "a redis:// task store needs redis-py: pip install 'toolpalette[redis]'"
            ) from exc
        self.url = url
        """The server's URL."""
        self._prefix = prefix
        self._redis: Any = redis_asyncio.Redis.from_url(url)
        self._replace: Any = self._redis.register_script(_REPLACE)

    async def create(self, task_id: str, record: dict[str, Any], expires: float) -> None:
        key = self._prefix + task_id
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={"v": "1", "b": json.dumps(record)})
            pipe.pexpireat(key, int(expires * 1000))
            await pipe.execute()

    async def load(self, task_id: str) -> Versioned | None:
        found = await self._redis.hmget(self._prefix + task_id, "b", "v")
        if found[0] is None or found[1] is None:
            return None
        return json.loads(found[0]), int(found[1])

    async def replace(
        self, task_id: str, record: dict[str, Any], version: int, expires: float
    ) -> bool:
        done = await self._replace(
            keys=[self._prefix + task_id],
            args=[str(version), str(version + 1), json.dumps(record), int(expires * 1000)],
        )
        return bool(done)

    async def close(self) -> None:
        await self._redis.aclose()


def task_store(spec: str | None) -> TaskStore:
    """The store ``spec`` names: ``memory``, ``sqlite:PATH`` (or a path), ``redis://...``.

    What ``serve --task-store`` and ``TOOLPALETTE_TASK_STORE`` take, for a host that
    reads the store from its own configuration. None or ``""`` is ``memory``;
    ``valkey://`` is ``redis://``.

    Raises:
        ValueError: ``spec`` names no store.
    """
    if not spec or spec == "memory":
        return MemoryTaskStore()
    if spec.startswith(("redis://", "rediss://", "unix://", "valkey://")):
        return RedisTaskStore(spec.replace("valkey://", "redis://", 1))
    if spec.startswith("sqlite:"):
        path = spec.removeprefix("sqlite:").removeprefix("//")
        if not path:
            raise ValueError("a sqlite task store needs a path: sqlite:/var/lib/app/tasks.db")
        return SqliteTaskStore(path)
    if "://" in spec or ":" in spec.split("/")[0]:
        raise ValueError(
            "the task store is memory, sqlite:PATH or redis://HOST:PORT/DB, not " + repr(spec[:40])
        )
    return SqliteTaskStore(spec)
