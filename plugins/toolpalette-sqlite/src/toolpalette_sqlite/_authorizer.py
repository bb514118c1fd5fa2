"""SQLite authorizers: what a read-only query may do, and what ``execute`` may not."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Authorizer", "read_only", "writable"]

_ACTION_NAMES: Final = (
    "CREATE_INDEX",
    "CREATE_TABLE",
    "CREATE_TEMP_INDEX",
    "CREATE_TEMP_TABLE",
    "CREATE_TEMP_TRIGGER",
    "CREATE_TEMP_VIEW",
    "CREATE_TRIGGER",
    "CREATE_VIEW",
    "DELETE",
    "DROP_INDEX",
    "DROP_TABLE",
    "DROP_TEMP_INDEX",
    "DROP_TEMP_TABLE",
    "DROP_TEMP_TRIGGER",
    "DROP_TEMP_VIEW",
    "DROP_TRIGGER",
    "DROP_VIEW",
    "INSERT",
    "PRAGMA",
    "READ",
    "SELECT",
    "TRANSACTION",
    "UPDATE",
    "ATTACH",
    "DETACH",
    "ALTER_TABLE",
    "REINDEX",
    "ANALYZE",
    "CREATE_VTABLE",
    "DROP_VTABLE",
    "FUNCTION",
    "SAVEPOINT",
    "RECURSIVE",
)

_ACTIONS: Final = {
    getattr(sqlite3, f"SQLITE_{name}"): name.replace("_", " ")
    for name in _ACTION_NAMES
    if hasattr(sqlite3, f"SQLITE_{name}")
}
"""Action code to a readable name (ATTACH shares its number with an error code)."""

_READ: Final = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})

_DENIED_FUNCTIONS: Final = frozenset({"load_extension", "fts3_tokenizer"})
"""Functions no statement may call: they load code or plant pointers."""

_REPORTING_PRAGMAS: Final = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "foreign_key_check",
        "integrity_check",
        "quick_check",
    }
)
"""PRAGMAs whose argument only names what to report on."""

_SETTING_PRAGMAS: Final = frozenset(
    {
        "application_id",
        "auto_vacuum",
        "collation_list",
        "compile_options",
        "data_version",
        "database_list",
        "encoding",
        "foreign_keys",
        "freelist_count",
        "function_list",
        "journal_mode",
        "max_page_count",
        "module_list",
        "page_count",
        "page_size",
        "pragma_list",
        "schema_version",
        "user_version",
    }
)
"""PRAGMAs that read a setting when given no value (and change it when given one)."""


@dataclass
class Authorizer:
    """A callable for ``Connection.set_authorizer`` that records what it refused."""

    read_only: bool
    """Allow reading only (``query``), or everything but the escapes (``execute``)."""
    refused: list[str] = field(default_factory=list)
    """What was refused, readable, in the order SQLite asked."""

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, src: str | None
    ) -> int:
        reason = self._judge(action, arg1, arg2)
        if reason is None:
            return sqlite3.SQLITE_OK
        self.refused.append(reason)
        return sqlite3.SQLITE_DENY

    def _judge(self, action: int, arg1: str | None, arg2: str | None) -> str | None:
        if action == sqlite3.SQLITE_FUNCTION:
            name = (arg2 or "").lower()
            return f"the function {name}()" if name in _DENIED_FUNCTIONS else None
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return "ATTACH / DETACH (and VACUUM INTO): only the configured database is used"
        if not self.read_only:
            if action in (sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT):
                return "transaction control: each execute call commits on its own"
            return None
        if action in _READ:
            return None
        if action == sqlite3.SQLITE_PRAGMA:
            return _judge_pragma((arg1 or "").lower(), arg2)
        what = _ACTIONS.get(action, f"action {action}")
        target = f" on {arg1}" if arg1 else ""
        return f"{what}{target}"


def _judge_pragma(name: str, value: str | None) -> str | None:
    if name in _REPORTING_PRAGMAS:
        return None
    if name in _SETTING_PRAGMAS and value is None:
        return None
    if name in _SETTING_PRAGMAS:
        return f"PRAGMA {name} with a value (it changes the database)"
    return f"PRAGMA {name} (not one of the read-only PRAGMAs)"


def read_only() -> Authorizer:
    """The authorizer of ``query``, ``list_tables`` and ``describe_table``."""
    return Authorizer(read_only=True)


def writable() -> Authorizer:
    """The authorizer of ``execute``: no ATTACH, DETACH, extensions or transactions."""
    return Authorizer(read_only=False)
