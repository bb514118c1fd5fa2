"""Host configuration: explicit renames and prefixes, and each pack's own settings.

Its keys: docs/host-guide/configuration.md; a key nothing reads is a ``config`` problem.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Union

from toolpalette._plugins.problems import Problem
from toolpalette.errors import ConfigError

if TYPE_CHECKING:
    from toolpalette._tools.provider import ToolProvider
    from toolpalette._tools.replaced import ReplacedProvider

__all__ = [
    "SERVE_AUTH_KEYS",
    "SERVE_KEYS",
    "ConfigSource",
    "HubConfig",
    "did_you_mean",
    "load_config",
    "renamed",
    "shown_name",
]


ConfigSource = Union[Mapping[str, Any], str, "os.PathLike[str]", None]
"""What ``ToolHub(config=...)`` accepts: a mapping, a file path, or None (look in the CWD)."""

KNOWN_KEYS: Final = frozenset(
    {"rename", "prefix", "packs", "worker_threads", "mcp_servers", "mcp_json", "serve"}
)
"""The configuration keys this module reads; others are ``config`` problems."""
SERVE_AUTH_KEYS: Final = (
    "auth_issuer",
    "auth_audience",
    "auth_jwks_url",
    "auth_public_key_file",
    "auth_required_scopes",
    "auth_resource_url",
)
"""The ``[serve]`` table's authorization keys (``toolpalette serve``'s ``--auth-...``)."""
SERVE_KEYS: Final = frozenset(
    {
        *SERVE_AUTH_KEYS,
        "palettes",
        "tool_search",
        "defer",
        "log_level",
        "max_sessions",
        "sessions_per_client",
    }
)
"""The keys of the ``[serve]`` table (``toolpalette serve`` reads them)."""
_PREFIX: Final = re.compile(r"^[A-Za-z0-9_-]{1,63}\Z")
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True)
class HubConfig:
    """A host's configuration, validated."""

    rename: Mapping[str, str] = field(default_factory=dict)
    """``old`` or ``pack.old`` to the new tool name."""
    prefix: Mapping[str, str] = field(default_factory=dict)
    """Pack name to the prefix put in front of each of its tools."""
    packs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Pack name to that pack's own settings."""
    source: str | None = None
    """The file the configuration was read from, if any."""
    worker_threads: int | None = None
    """Threads of the pool the hub's thinkers run sync tools in; None: the default size."""
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)
    """Server name to its ``[mcp_servers.NAME]`` table, as written (checked by the client)."""
    mcp_json: str | None = None
    """A desktop client's JSON configuration to read servers from, resolved to a path."""
    serve: Mapping[str, Any] = field(default_factory=dict)
    """The ``[serve]`` table as written, its known keys only (checked by the command)."""
    problems: tuple[Problem, ...] = ()
    """Keys nothing reads (``config`` problems), each with the closest known key."""

    def name_for(self, pack: str, tool_name: str) -> str:
        """The name a pack's tool is offered under: renamed, prefixed, or unchanged."""
        renamed = self.rename.get(f"{pack}.{tool_name}") or self.rename.get(tool_name)
        if renamed:
            return renamed
        return self.prefix.get(pack, "") + tool_name

    def pack_config(self, pack: str) -> Mapping[str, Any]:
        """The read-only settings of ``pack`` (empty when there are none)."""
        settings = self.packs.get(pack)
        return MappingProxyType(dict(settings)) if settings else _EMPTY


def load_config(
    config: ConfigSource = None,
    *,
    rename: Mapping[str, str] | None = None,
    prefix: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> HubConfig:
    """Read and validate the host configuration; code arguments win over the file.

    Args:
        config: A mapping (the table itself), a path to a ``toolpalette.toml`` or a
            ``pyproject.toml``, or None to look for one of those in ``cwd``.
        rename: Renames given in code, merged over the file's.
        prefix: Prefixes given in code, merged over the file's.
        cwd: Where to look when ``config`` is None; defaults to the current directory.

    Raises:
        ConfigError: the file is not valid TOML, a key has the wrong type, or a new name
            or prefix is not valid (a ``ValueError``).
        OSError: an explicit path cannot be read.
    """
    if isinstance(config, Mapping):
        table, source, shown = config, None, None
    else:
        table, source, shown = _read_file(
            config, os.fspath(cwd) if cwd is not None else os.getcwd()
        )
    serve = _serve(table, shown)
    problems = _unknown_keys(table, shown, KNOWN_KEYS) + _unknown_keys(
        serve, shown, SERVE_KEYS, within="serve"
    )
    merged_rename = {**_str_map(table, "rename", shown), **dict(rename or {})}
    merged_prefix = {**_str_map(table, "prefix", shown), **dict(prefix or {})}
    _check_names(merged_rename, merged_prefix, shown)
    threads = _worker_threads(table, shown)
    servers, mcp_json = _mcp(table, source, shown)
    return HubConfig(
        merged_rename,
        merged_prefix,
        _packs(table, shown),
        source,
        threads,
        servers,
        mcp_json,
        MappingProxyType({k: v for k, v in serve.items() if k in SERVE_KEYS}),
        problems,
    )


def shown_name(source: str | None) -> str:
    """How problems and messages name a configuration file: its name, or ``configuration``."""
    return os.path.basename(source) if source else "configuration"


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the known word closest to a misspelt one, else ``""``."""
    import difflib  # only for a misspelt key: the command line starts without it

    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_keys(
    table: Mapping[str, Any], shown: str | None, known: frozenset[str], within: str = ""
) -> tuple[Problem, ...]:
    """A ``config`` problem (and a logged warning) for each key nothing reads."""
    unknown = sorted(str(key) for key in set(table) - known)
    if not unknown:
        return ()
    where = shown or "configuration"
    table_of = f" of [{within}]" if within else ""
    problems = tuple(
        Problem(
            "config",
            f"{where}: the key {key!r}{table_of} is not a toolpalette setting and is ignored"
            f"{did_you_mean(key, known)}",
            os.path.basename(where),
            None,
            f"{within}.{key}" if within else key,
        )
        for key in unknown
    )
    import logging  # only on this path: the command line starts without it

    log = logging.getLogger("toolpalette.config")
    for problem in problems:
        log.warning("%s", problem.reason)
    return problems


def _serve(table: Mapping[str, Any], shown: str | None) -> Mapping[str, Any]:
    value = table.get("serve", {})
    if not isinstance(value, Mapping):
        raise _error("'serve' must be a table", shown)
    return value


def _error(reason: str, shown: str | None) -> ConfigError:
    return ConfigError(reason=reason, source=shown)


def _mcp(
    table: Mapping[str, Any], source: str | None, shown: str | None
) -> tuple[dict[str, Any], str | None]:
    servers = table.get("mcp_servers", {})
    if not isinstance(servers, Mapping):
        raise _error("'mcp_servers' must map names to tables", shown)
    path = table.get("mcp_json")
    if path is not None and not isinstance(path, str):
        raise _error("'mcp_json' must be a path", shown)
    if path is not None and source is not None:
        path = os.path.join(os.path.dirname(source), path)
    return dict(servers), path


def _read_file(
    path: str | os.PathLike[str] | None, cwd: str
) -> tuple[Mapping[str, Any], str | None, str | None]:
    """The table, the file's path, and its name as messages show it (as the host gave it)."""
    if path is None:
        for name in ("toolpalette.toml", "pyproject.toml"):
            candidate = os.path.join(cwd, name)
            if os.path.isfile(candidate):
                table = _table_of(candidate, name)
                if table is not None:
                    return table, candidate, name
        return {}, None, None
    file = os.fspath(path)
    return _table_of(file, file) or {}, file, file


_PLACE: Final = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)\s*$")
"""Where tomllib (and tomli) say a document went wrong, at the end of the message."""


def _toml_place(error: str, content: str) -> tuple[str, int, int] | tuple[str, None, None]:
    """A TOML error's message without its place, and the place: line and column (1-based)."""
    message = (error.splitlines() or ["cannot be parsed"])[0]
    place = _PLACE.search(message)
    if place is None:
        return message, None, None
    text = message[: place.start()]
    if place.group(1) is not None:
        return text, int(place.group(1)), int(place.group(2))
    lines = content.split("\n")  # the end of the document: after its last character
    return f"{text} (at the end of the file)", len(lines), len(lines[-1]) + 1


def _table_of(file: str, shown: str) -> Mapping[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

    name = os.path.basename(file)
    with open(file, encoding="utf-8") as text:
        content = text.read()
    try:
        data: dict[str, Any] = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        message, line, column = _toml_place(str(exc), content)
        raise ConfigError(
            reason=f"not valid TOML: {message}", source=shown, line=line, column=column
        ) from exc
    if name != "pyproject.toml":
        return data
    tool = data.get("tool", {})
    table = tool.get("toolpalette") if isinstance(tool, Mapping) else None
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise _error("[tool.toolpalette] must be a table", shown)
    return table


def _str_map(table: Mapping[str, Any], key: str, shown: str | None) -> dict[str, str]:
    value = table.get(key, {})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _error(f"{key!r} must map strings to strings", shown)
    return dict(value)


def _packs(table: Mapping[str, Any], shown: str | None) -> dict[str, Mapping[str, Any]]:
    value = table.get("packs", {})
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        raise _error("'packs' must map pack names to tables", shown)
    return {str(k): MappingProxyType(dict(v)) for k, v in value.items()}


def _worker_threads(table: Mapping[str, Any], shown: str | None) -> int | None:
    value = table.get("worker_threads")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _error("'worker_threads' must be a positive integer", shown)
    return value


def _check_names(rename: Mapping[str, str], prefix: Mapping[str, str], shown: str | None) -> None:
    if rename:
        # Imported only here: the tool module brings logging and threading, which a
        # command answered from the listing cache does without.
        from toolpalette._tools.tool import TOOL_NAME

        for old, new in rename.items():
            if not TOOL_NAME.match(new):
                raise _error(
                    f"rename {old!r} -> {new!r}: tool names are "
                    "1-64 characters of letters, digits, '_' and '-'",
                    shown,
                )
    for pack, text in prefix.items():
        if not _PREFIX.match(text):
            raise _error(
                f"prefix for pack {pack!r} is {text!r}: "
                "use letters, digits, '_' and '-' (e.g. 'files_')",
                shown,
            )


def renamed(inner: ToolProvider, name: str) -> ReplacedProvider:
    """``inner`` offered as ``name`` (the host's rename): its record with the name replaced.

    Schemas, annotations, options, metadata and origin stay the tool's own. A display
    name the tool declared stays too; one derived from the old name (``search`` shown
    as "Search") follows the new one, so two prefixed copies of a tool do not show
    under one title.

    Raises:
        ValueError: ``name`` is not a valid tool name.
    """
    # Imported here: reading a configuration (a warm listing does) needs no provider.
    from toolpalette._tools.info import default_display_name
    from toolpalette._tools.replaced import ReplacedProvider

    if inner.display_name == default_display_name(inner.name):
        return ReplacedProvider(inner, name=name, display_name=default_display_name(name))
    return ReplacedProvider(inner, name=name)
