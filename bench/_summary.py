"""The one summary table: each headline figure as a ratio against its anchor.

Every benchmark module calls `record` for its headline figures, with the anchor (and any
peers doing the same job) measured in the same run; ``python -m bench`` prints `table`
after every module's own tables, so one glance says which goals are met and which are
missed, and how far ahead of (or behind) the best peer each figure stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Figure:
    """One headline figure, its anchor (same run) and its goal on the ratio."""

    case: str
    value: float
    anchor: str
    anchor_value: float
    unit: str
    goal: str  # "<= 1.2", ">= 3" or "" (shown for information, no goal)
    # The same job done by other libraries, same run and unit: name -> figure.
    peers: Mapping[str, float] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.value / self.anchor_value if self.anchor_value else float("inf")

    @property
    def higher_is_better(self) -> bool:
        return self.goal.startswith(">=")

    @property
    def best_peer(self) -> tuple[str, float] | None:
        """The peer with the best figure (lowest, or highest under a ``>=`` goal)."""
        if not self.peers:
            return None
        pick = max if self.higher_is_better else min
        return pick(self.peers.items(), key=lambda item: item[1])

    def vs_best_peer(self) -> str:
        best = self.best_peer
        if best is None:
            return ""
        name, figure = best
        return f"{self.value / figure:.2f}x {name}" if figure else f"inf {name}"

    @property
    def status(self) -> str:
        if not self.goal:
            return "info"
        op, _, number = self.goal.partition(" ")
        limit = float(number)
        ok = self.ratio <= limit if op == "<=" else self.ratio >= limit
        return "met" if ok else "MISSED"


FIGURES: list[Figure] = []


def record(
    case: str,
    value: float,
    anchor: str,
    anchor_value: float,
    *,
    unit: str,
    goal: str = "",
    peers: Mapping[str, float] | None = None,
) -> None:
    """Keep one figure for the summary; ``goal`` bounds ``value / anchor_value``.

    ``peers`` are other libraries' figures for the same job, measured in the same run
    and unit (the anchor may be one of them); the table shows the ratio to the best.
    """
    if goal:
        op, _, number = goal.partition(" ")
        if op not in ("<=", ">=") or not number:
            raise ValueError(f"goal must read '<= N' or '>= N', not {goal!r}")
        float(number)
    FIGURES.append(Figure(case, value, anchor, anchor_value, unit, goal, dict(peers or {})))


def _number(value: float) -> str:
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"


def table() -> str:
    """The Markdown summary of every recorded figure, in the order recorded."""
    lines = [
        "| case | measured | anchor (same run) | ratio | goal | status | vs best peer |",
        "|---|---:|---|---:|---:|---|---:|",
    ]
    for f in FIGURES:
        lines.append(
            f"| {f.case} | {_number(f.value)} {f.unit} "
            f"| {f.anchor}: {_number(f.anchor_value)} {f.unit} "
            f"| {f.ratio:.2f}x | {f.goal + 'x' if f.goal else 'info'} | {f.status} "
            f"| {f.vs_best_peer()} |"
        )
    met = sum(f.status == "met" for f in FIGURES)
    missed = sum(f.status == "MISSED" for f in FIGURES)
    lines += [
        "",
        f"{met} goals met, {missed} missed, {len(FIGURES) - met - missed} for information.",
    ]
    return "\n".join(lines)
