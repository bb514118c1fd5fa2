"""The collision policy: what a set of packs offers, and what two of them claim alike."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolpalette._plugins.packs import Pack
from toolpalette._plugins.problems import Problem
from toolpalette.errors import ToolCollisionError

if TYPE_CHECKING:
    from toolpalette._tools.provider import ToolProvider

__all__ = ["Collision", "by_name", "duplicate_pack", "resolve_claims"]


@dataclass(frozen=True)
class Collision:
    """Packs (or other claims) offering different tools under one name: none is offered."""

    name: str
    claims: tuple[tuple[Pack, ToolProvider], ...]

    def error(self, more: int = 0) -> ToolCollisionError:
        first, second = (provider.describe() for _, provider in self.claims[:2])
        error = ToolCollisionError(tool_name=self.name, first=first, second=second)
        if not more:
            return error
        hint = f"{error.hint} ({more} more collision(s): run `toolpalette check`)"
        return ToolCollisionError(tool_name=self.name, first=first, second=second, hint=hint)

    def problem(self) -> Problem:
        """One problem naming every claimant where it comes from, and how to resolve it.

        A claim that is no pack (an MCP server's) is named by its source, the file or
        pack or code that configures the server, and the hint leads with its own
        ``prefix``/``rename``; the packs' renames and prefixes follow when a pack claims too.
        """
        packs = ", ".join(pack.name for pack, _ in self.claims)
        labels = ", ".join(
            pack.label or pack.claim_source or "(added in code)" for pack, _ in self.claims
        )
        who = "; ".join(
            f"{p.describe()} ({pack.claim_source})"
            if pack.claim_source
            else f"{p.describe()} in pack {pack.name!r}"
            for pack, p in self.claims
        )
        hints = [
            pack.claim_hint.replace("{tool}", getattr(p, "remote_name", p.name))
            for pack, p in self.claims
            if pack.claim_hint
        ]
        if any(pack.claim_hint is None for pack, _ in self.claims):
            hints.append(self.error().hint)
        reason = (
            f"different tools claim the name {self.name!r}: {who}. None of them is offered; "
            f"{'; or '.join(hints)}"
        )
        known = any(pack.label or pack.claim_source for pack, _ in self.claims)
        return Problem("collision", reason, packs, labels if known else None, self.name)


def resolve_claims(packs: Iterable[Pack]) -> tuple[list[ToolProvider], list[Collision]]:
    """The offered providers and the collisions of ``packs``, independent of load order."""
    claims: dict[str, list[tuple[Pack, ToolProvider]]] = {}
    for pack in sorted(packs, key=lambda p: p.name):
        for provider in pack.providers:
            claims.setdefault(provider.name, []).append((pack, provider))
    offered: list[ToolProvider] = []
    collisions: list[Collision] = []
    for name, claimed in claims.items():
        distinct: list[tuple[Pack, ToolProvider]] = []
        for claim in claimed:
            if not any(_same(claim[1], seen[1]) for seen in distinct):
                distinct.append(claim)
        if len(distinct) == 1:
            offered.append(distinct[0][1])
        else:
            collisions.append(Collision(name, tuple(distinct)))
    collisions.sort(key=lambda c: c.name)
    return offered, collisions


def _same(one: ToolProvider, other: ToolProvider) -> bool:
    """Whether two packs' providers are one tool; a comparison that raises says no."""
    if one is other:
        return True
    try:
        return bool(one == other)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return False


def by_name(packs: Iterable[Pack]) -> dict[str, list[Pack]]:
    """The packs grouped by name: a group of two or more is a `duplicate_pack()`."""
    grouped: dict[str, list[Pack]] = {}
    for pack in packs:
        grouped.setdefault(pack.name, []).append(pack)
    return grouped


def duplicate_pack(name: str, group: list[Pack]) -> Problem:
    """The problem of several distributions declaring one pack name (none is imported)."""
    labels = ", ".join(pack.label or "?" for pack in group)
    reason = (
        f"{len(group)} distributions declare the pack {name!r} ({labels}); none of them is "
        "imported. Uninstall one, or rename its entry point."
    )
    return Problem("collision", reason, name, labels)
