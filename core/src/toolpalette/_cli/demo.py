"""``toolpalette demo``: the main job, on scratch data (see ``toolpalette._cli.scenario``)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="run a scripted session of two agents over the first-party packs",
        description=(
            "Build a scratch workspace and SQLite database, bind a read-only analyst and "
            "a read-write editor, and show what a model sees for each call."
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play the demo on standard output.

    The demo shows each failure itself, so the default failure log is off while it plays.
    """
    from toolpalette._cli.scenario import run as play

    failures = logging.getLogger("toolpalette.failures")
    level = failures.level
    failures.setLevel(logging.ERROR)
    try:
        return play(sys.stdout)
    finally:
        failures.setLevel(level)
