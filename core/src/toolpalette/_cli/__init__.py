"""The ``toolpalette`` command: one module per subcommand, registered from one tuple."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="toolpalette",
        description="Tool packs and skilljars for LLM agents: list, check, call, serve, demo.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"toolpalette._cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 a problem found, 2 bad usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status: int = func(args)
    except BrokenPipeError:  # the reader went away (``toolpalette list | head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
