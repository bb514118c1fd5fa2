"""The read-only commands' answers, kept in the listing cache between runs."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from toolpalette._cli.list import given_hub
from toolpalette._plugins import listing
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.switches import Switches

__all__ = ["Answer"]


@dataclass(frozen=True)
class Answer:
    """Where one command's answer is cached, and under which key; both None: not cached."""

    path: str | None = None
    """The cache file."""
    key: str | None = None
    """The key the answer must be stored under to be read back."""
    problems: tuple[Problem, ...] = ()
    """The configuration's problems, read on the way (a cached answer builds no hub)."""

    @classmethod
    def about_packs(cls, args: argparse.Namespace, name: str) -> Answer:
        """The answer ``name`` (``show``, ``plugins``...), keyed on the installed packs.

        The configuration (``--config``, or the one in this directory) is read as the
        hub reads it, so a configuration the hub refuses is refused here too.
        """
        if given_hub() is not None:
            return cls()
        from toolpalette._plugins.config import load_config

        config = load_config(getattr(args, "config", None))
        if config.mcp_servers or config.mcp_json:
            return cls()  # servers' tools come through a hub and their own kept listings
        switches = Switches.from_environ()
        path = listing.cache_file(switches, name)
        if path is None:
            return cls()
        key = listing.packs_key(switches, listing.settings_of(config))
        return cls(path, key, tuple(config.problems))

    @classmethod
    def about_skilljars(cls, args: argparse.Namespace, name: str) -> Answer:
        """The answer ``name`` (``skills``), keyed on the installed skilljars.

        The configuration in this directory is read as the hub reads it (a broken one
        fails alike); one that names MCP servers is never cached (their skills are
        listed live).
        """
        if given_hub() is not None:
            return cls()
        from toolpalette._plugins.config import load_config

        config = load_config(getattr(args, "config", None))
        if config.mcp_servers or config.mcp_json:
            return cls()  # an MCP server's skills (the Skills extension) are listed live
        switches = Switches.from_environ()
        path = listing.cache_file(switches, name)
        if path is None:
            return cls()
        return cls(path, listing.skills_key(switches))

    @property
    def usable(self) -> bool:
        """Whether the answer can be read from and written to the cache."""
        return self.path is not None and self.key is not None

    def read(self) -> Any | None:
        """The cached answer, or None on a miss (the caller builds it and `write()` s it)."""
        if self.path is None or self.key is None:
            return None
        return listing.load_answer(self.path, self.key)

    def write(self, answer: Any) -> None:
        """Store ``answer`` (a JSON value) for the next run; skipped when not `usable`."""
        if self.path is not None and self.key is not None:
            listing.store_answer(self.path, self.key, answer)
