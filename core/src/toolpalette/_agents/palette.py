"""ReadOnlyPalette: what keeps a read-only thinker read-only, whatever else happens."""

from __future__ import annotations

from collections.abc import Iterable
from typing import final

from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.registry import ToolRegistry, lookup
from toolpalette.errors import ToolError

__all__ = ["ReadOnlyPalette"]


@final
class ReadOnlyPalette:
    """The two halves of the read-only guarantee.

    [`sweep()`][toolpalette.ReadOnlyPalette.sweep] keeps mutating tools out of what the
    model is offered; at call time they are refused, because a registry can be widened
    after the sweep (by a reconcile hook, a system-wide tool, a grant, a direct
    registration). A thinker's executor refuses them itself, from its binding's
    read-only flag (``_run/rules.py``);
    [`require_read_only()`][toolpalette.ReadOnlyPalette.require_read_only] is the same
    check for an executor built by hand
    (``Executor(require_read_only=ReadOnlyPalette.require_read_only)``). Both run
    outside every hook.
    """

    @staticmethod
    def sweep(registry: ToolRegistry, names: Iterable[str] | None = None) -> list[str]:
        """Remove every mutating provider from ``registry``; returns the removed names, sorted.

        ``names`` limits the sweep to those tools, for a caller that knows only they
        changed since the last whole sweep (a thinker adding the tools granted since).
        """
        if names is None:
            keep = [p.name for p in registry.providers() if p.read_only]
            return registry.retain(keep)
        removed = []
        for name in sorted(set(names)):
            provider = lookup(registry, name)
            if provider is not None and not provider.read_only and registry.unregister(name):
                removed.append(name)
        return removed

    @staticmethod
    def require_read_only(provider: ToolProvider) -> None:
        """Refuse a mutating provider.

        Raises:
            ToolError: status 403, code ``read_only``, when ``provider`` is mutating.
        """
        if not provider.read_only:
            raise ToolError(
                f"Tool {provider.name!r} changes things, and this agent is read-only.",
                code="read_only",
                status=403,
            )
