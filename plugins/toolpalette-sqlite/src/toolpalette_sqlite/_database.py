"""The configured database, its connections, and SQLite's errors as ToolErrors."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from toolpalette import ToolContext, ToolError

from toolpalette_sqlite import ENV_DATABASE
from toolpalette_sqlite._authorizer import Authorizer

__all__ = ["DEFAULT_BUSY_TIMEOUT", "Database", "sql_errors"]

DEFAULT_BUSY_TIMEOUT: Final = 5.0
"""Seconds to wait for a lock held by another connection."""
_PROGRESS_STEPS: Final = 1000

_NOT_CONFIGURED: Final = (
    "The sqlite tools have no database configured. The host sets it with "
    '[tool.toolpalette.packs.sqlite] database = "/path/to/file.db" (or '
    "ToolHub(config={'packs': {'sqlite': {'database': ...}}})), or with the "
    f"{ENV_DATABASE} environment variable."
)


def _unavailable() -> ToolError:
    return ToolError(
        "The configured database cannot be opened (it is missing, unreadable, or not a "
        "SQLite database); the host must fix its sqlite pack configuration.",
        code="database_unavailable",
        status=503,
    )


@dataclass(frozen=True)
class Database:
    """The database file a call works on, and how to connect to it."""

    path: str
    """Absolute path of the database file."""
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT
    """Seconds to wait for another connection's lock."""
    create: bool = False
    """Whether ``execute`` may create the file when it does not exist."""

    @classmethod
    def from_context(cls, ctx: ToolContext) -> Database:
        """The database the host configured for this call.

        Raises:
            ToolError: none is configured, or the configuration is malformed.
        """
        config: Mapping[str, Any] = ctx.config or {}
        raw = config.get("database") or os.environ.get(ENV_DATABASE)
        if not raw:
            raise ToolError(_NOT_CONFIGURED, code="not_configured", status=503)
        timeout = config.get("busy_timeout", DEFAULT_BUSY_TIMEOUT)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout < 0:
            raise ToolError(
                "The sqlite pack's busy_timeout must be a number of seconds.",
                code="not_configured",
                status=503,
            )
        path = os.path.abspath(os.path.expanduser(os.fspath(raw)))
        return cls(path, float(timeout), bool(config.get("create", False)))

    def _uri(self, mode: str) -> str:
        return f"{Path(self.path).as_uri()}?mode={mode}"

    @contextlib.contextmanager
    def connect(
        self, authorizer: Authorizer, abort: threading.Event, *, max_length: int | None = None
    ) -> Iterator[sqlite3.Connection]:
        """A connection for one call: read-only unless the authorizer allows writes.

        ``max_length`` caps every string or blob SQLite makes (Python 3.11 and later):
        a longer one fails inside SQLite before it is allocated.
        """
        mode = "ro" if authorizer.read_only else "rwc" if self.create else "rw"
        if mode != "rwc" and not os.path.isfile(self.path):
            raise _unavailable()
        try:
            conn = sqlite3.connect(
                self._uri(mode), uri=True, timeout=self.busy_timeout, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise _unavailable() from exc
        try:
            if authorizer.read_only:
                conn.execute("PRAGMA query_only = ON")
            conn.set_authorizer(authorizer)
            limit = getattr(sqlite3, "SQLITE_LIMIT_LENGTH", None)  # Python 3.11 and later
            if max_length is not None and limit is not None:
                conn.setlimit(limit, max_length)  # type: ignore[attr-defined,unused-ignore]
            conn.set_progress_handler(lambda: 1 if abort.is_set() else 0, _PROGRESS_STEPS)
            yield conn
        finally:
            conn.close()


@contextlib.contextmanager
def sql_errors(
    authorizer: Authorizer, abort: threading.Event, budget: int | None = None
) -> Iterator[None]:
    """Turn SQLite's exceptions into ToolErrors the model can act on."""
    try:
        yield
    except sqlite3.Error as exc:
        if budget is not None and "too big" in str(exc):
            raise ToolError(
                f"A value in the result is longer than the {budget} bytes a call may "
                "return; select a shorter part of it (substr(), length()).",
                code="output_too_large",
                status=413,
            ) from exc
        raise _tool_error(exc, authorizer, abort) from exc
    except sqlite3.Warning as exc:  # Python < 3.12 raises it for several statements
        raise _tool_error(exc, authorizer, abort) from exc


def _tool_error(exc: Exception, authorizer: Authorizer, abort: threading.Event) -> ToolError:
    message = str(exc)
    if authorizer.refused:
        return _refusal(authorizer)
    if "one statement at a time" in message:
        return ToolError(
            "Only one SQL statement is allowed per call; send the statements one by one.",
            code="multiple_statements",
            status=400,
        )
    if abort.is_set() and "interrupt" in message:
        return ToolError("The statement was interrupted.", code="interrupted", status=504)
    return _classify(exc, message)


def _refusal(authorizer: Authorizer) -> ToolError:
    what = authorizer.refused[0]
    if authorizer.read_only:
        return ToolError(
            f"Refused: {what}. This tool is read-only (SELECT, WITH, EXPLAIN and the "
            "reporting PRAGMAs); use the execute tool to change data.",
            code="read_only",
            status=403,
        )
    return ToolError(f"Refused: {what}.", code="not_allowed", status=403)


def _classify(exc: Exception, message: str) -> ToolError:
    if "readonly database" in message:
        return ToolError(
            "This tool is read-only; use the execute tool to change data.",
            code="read_only",
            status=403,
        )
    if "file is not a database" in message or "unable to open" in message:
        return _unavailable()
    if "database is locked" in message or "database table is locked" in message:
        return ToolError(
            "The database is busy (locked by another connection); try again later.",
            code="busy",
            status=503,
        )
    if isinstance(exc, sqlite3.IntegrityError):
        return ToolError(f"Constraint failed: {message}", code="constraint", status=409)
    if isinstance(exc, sqlite3.ProgrammingError):
        return ToolError(f"Bad parameters: {message}", code="bad_parameters", status=400)
    return ToolError(f"SQLite error: {message}", code="sql_error", status=400)
