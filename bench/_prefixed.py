"""A crafted prefix-heavy catalog: thirty ``github_...`` tools and four of other names.

Each question names a task in the github tools' own words (two words of one of their
names) and one word only another tool's description holds: that tool is the right
answer, and its words match nearly as well as the crowd's. Seeded: the same questions
every run.
"""

from __future__ import annotations

import random
import re
from typing import NamedTuple

from toolpalette._search.ranking import ToolDocument

SEED = 7
PER_TOOL = 10
"""Questions per tool of another prefix."""

_REPO = {
    "type": "object",
    "properties": {"repo": {"type": "string", "description": "The repository, as owner/name."}},
}
_PARTS = ("issues", "issue_comments", "issue_labels", "issue_events", "issue_assignees")
_VERBS = ("list", "get", "search", "update", "create", "close")
_OTHERS = (
    (
        "tickets_search",
        "Search the helpdesk tickets (issues) that customers opened, with their comments, "
        "status and priority, newest first.",
    ),
    (
        "incidents_list",
        "List the incidents (issues) paged to the on-call engineer, with their timeline "
        "and the services affected.",
    ),
    ("tasks_find", "Find tasks (issues) on the sprint board by assignee, label and due date."),
    (
        "bugs_report",
        "Report the bugs (issues) a crash reporter found in a mobile app build, with stack traces.",
    ),
)


class Case(NamedTuple):
    query: str
    expected: int
    """The position of the right tool in the catalog."""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def catalog() -> tuple[list[ToolDocument], list[Case]]:
    """The tools, the crowd's first, and the questions."""
    docs = [
        ToolDocument(
            f"github_{verb}_{part}",
            f"{verb.capitalize()} {part.replace('_', ' ')} of a GitHub repository.",
            _REPO,
        )
        for part in _PARTS
        for verb in _VERBS
    ]
    crowd = list(docs)
    theirs = {w for d in crowd for w in _words(f"{d.name} {d.description}")}
    rng = random.Random(SEED)
    cases = []
    for name, description in _OTHERS:
        docs.append(ToolDocument(name, description, {}))
        own = [w for w in _words(description) if w not in theirs and len(w) > 3]
        for _ in range(PER_TOOL):
            generic = _words(rng.choice(crowd).name)[1:3]
            cases.append(Case(" ".join([*generic, rng.choice(own)]), len(docs) - 1))
    return docs, cases
