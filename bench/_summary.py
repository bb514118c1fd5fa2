"""The one summary table: each headline figure as a ratio against its anchor.

Every benchmark module calls :func:`record` for its headline figures, with the anchor
measured in the same run; ``python -m bench`` prints :func:`table` after every module's
own tables, so one glance says which goals are met and which are missed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One headline figure, its anchor (same run) and its goal on the ratio."""

    case: str
    value: float
    anchor: str
    anchor_value: float
    unit: str
    goal: str  # "<= 1.2", ">= 3" or "" (shown for information, no goal)

    @property
    def ratio(self) -> float:
        return self.value / self.anchor_value if self.anchor_value else float("inf")

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
) -> None:
    """Keep one figure for the summary; ``goal`` bounds ``value / anchor_value``."""
    if goal:
        op, _, number = goal.partition(" ")
        if op not in ("<=", ">=") or not number:
            raise ValueError(f"goal must read '<= N' or '>= N', not {goal!r}")
        float(number)
    FIGURES.append(Figure(case, value, anchor, anchor_value, unit, goal))


def _number(value: float) -> str:
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"


def table() -> str:
    """The Markdown summary of every recorded figure, in the order recorded."""
    lines = [
        "| case | measured | anchor (same run) | ratio | goal | status |",
        "|---|---:|---|---:|---:|---|",
    ]
    for f in FIGURES:
        lines.append(
            f"| {f.case} | {_number(f.value)} {f.unit} "
            f"| {f.anchor}: {_number(f.anchor_value)} {f.unit} "
            f"| {f.ratio:.2f}x | {f.goal + 'x' if f.goal else 'info'} | {f.status} |"
        )
    met = sum(f.status == "met" for f in FIGURES)
    missed = sum(f.status == "MISSED" for f in FIGURES)
    lines += [
        "",
        f"{met} goals met, {missed} missed, {len(FIGURES) - met - missed} for information.",
    ]
    return "\n".join(lines)
