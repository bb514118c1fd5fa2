"""A palette of the two first-party packs, each deferred whole, for ``serve`` tests.

Imported by ``toolpalette serve --thinker bundle_fixture:TwoPacks`` in each worker.
"""

from __future__ import annotations

from toolpalette import Thinker, ToolSelector


class TwoPacks(Thinker):
    """The files and SQLite packs, each one catalog entry for ``search_tools``."""

    tool_search = "search"

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return (
            ToolSelector()
            .package("toolpalette_files", deferred="bundle")
            .package("toolpalette_sqlite", deferred="bundle")
        )
