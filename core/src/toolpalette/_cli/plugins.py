"""``toolpalette plugins``: every installed pack, its distribution, hooks and status."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from toolpalette._cli.cached import Answer
from toolpalette._cli.list import add_config_option, hub_from_args, table

if TYPE_CHECKING:
    from toolpalette._plugins.catalog import PluginInfo

__all__ = ["plugin_entry", "register"]


def register(subparsers: Any) -> None:
    """Add ``plugins`` to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "plugins",
        help="list installed tool packs",
        description="List installed tool packs: distribution, version, hooks, status.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--no-load", action="store_true", help="list packs as discovered, importing none"
    )
    add_config_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the packs; exit status 0."""
    cache = Answer.about_packs(args, "plugins" if args.no_load else "plugins-loaded")
    plugins = _entries(cache.read())
    if plugins is None:
        found = hub_from_args(args).plugins(load=not args.no_load)
        plugins = [plugin_entry(p) for p in found]
        cache.write(plugins)
    if args.json:
        print(json.dumps({"plugins": plugins}, indent=2))
        return 0
    if not plugins:
        print("No tool packs installed.")
        return 0
    rows = [
        (
            p["name"],
            p["status"],
            p["distribution"] or "-",
            p["version"] or "-",
            ", ".join(p["hooks"]) or "-",
        )
        for p in plugins
    ]
    print(table(rows, ("NAME", "STATUS", "DISTRIBUTION", "VERSION", "HOOKS")))
    return 0


def _entries(cached: Any) -> list[dict[str, Any]] | None:
    """The cached ``plugins --json`` entries, or None when they are not of that shape."""
    keys = {"name", "distribution", "version", "module", "hooks", "imported", "status"}
    if isinstance(cached, list) and all(isinstance(p, dict) and set(p) == keys for p in cached):
        return cached
    return None


def plugin_entry(info: PluginInfo) -> dict[str, Any]:
    """One pack in ``plugins --json``."""
    return {
        "name": info.name,
        "distribution": info.distribution,
        "version": info.version,
        "module": info.module,
        "hooks": list(info.hooks),
        "imported": info.imported,
        "status": info.status,
    }
