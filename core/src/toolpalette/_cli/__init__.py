"""The ``toolpalette`` command: one module per subcommand, registered from one tuple."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from toolpalette.errors import ConfigError

__all__ = ["main"]

COMMANDS: tuple[str, ...] = (
    "list",
    "show",
    "plugins",
    "check",
    "skills",
    "call",
    "serve",
    "demo",
    "new",
)
"""The subcommand modules (``toolpalette._cli.<name>``), in help order.

Each module defines ``register(subparsers)``, which adds its parser and sets
``func(args) -> int`` as the parser's default.
"""


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, as wide as the terminal, measured without ``shutil``.

    argparse builds a formatter for every argument it adds, and the default one asks
    ``shutil`` for the terminal's width: importing it (with ``bz2`` and ``lzma``) is a
    tenth of the start of a command answered from the listing cache. The width is the
    one ``shutil.get_terminal_size`` gives: ``COLUMNS``, else the terminal, else 80.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


def _columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """An argument parser (and subcommand parsers) formatting help with `_HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand, or with ``only`` that one.

    Each command module is imported to register it; running one command imports only
    its own module, so a quick command (``list`` on a warm cache) starts quickly.
    """
    parser = _Parser(
        prog="toolpalette",
        description="Tool packs and skilljars for LLM agents: list, check, call, serve, demo.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"toolpalette._cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 a problem found, 2 bad usage).

    A configuration that cannot be read (not TOML, a key of the wrong type) is bad
    usage: one line on stderr naming the file and the place, no traceback.
    """
    # Not list(...): importing the ``list`` command binds that name in this package.
    given = [*(sys.argv[1:] if argv is None else argv)]
    command = next((a for a in given if not a.startswith("-")), None)
    parser = build_parser(command if command in COMMANDS else None)
    args = parser.parse_args(given)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status: int = func(args)
    except BrokenPipeError:  # the reader went away (``toolpalette list | head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
