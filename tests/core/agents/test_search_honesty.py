"""search_tools says how many matched and whether more lie past the limit, and diversifies.

Each answer carries ``matches`` (every entry of the thinker's catalog the query
matches) and ``more`` (ranked entries were left unread), and its note begins with
"k of N"; results are reordered by name prefix so that a crowd of one prefix cannot
fill the top when other tools match nearly as well.
"""

from __future__ import annotations

from typing import Any

from toolpalette import Thinker, ToolHub, ToolSelector
from toolpalette.testing import FakeTool


def tool(name: str, description: str) -> FakeTool:
    return FakeTool(name, description=description, read_only=True, result={})


def searching(tools: list[FakeTool]) -> type[Thinker]:
    def declare(cls: type[Thinker]) -> ToolSelector:
        selector = ToolSelector()
        for t in tools:
            selector.tool(t, deferred=True)
        return selector

    return type(
        "Searching",
        (Thinker,),
        {"tool_search": "search", "declare_compatible_tools": classmethod(declare)},
    )


INVOICES = [tool(f"invoice_tool_{i:02d}", f"Handle invoice number {i}.") for i in range(30)]
OTHERS = [tool(f"calendar_{i}", f"Book a meeting room {i}.") for i in range(3)]


def search(thinker: Thinker, query: str, limit: int) -> dict[str, Any]:
    thinker.begin_turn()
    return thinker.search("tool", query, limit)


def test_an_answer_cut_by_its_limit_says_so():
    thinker = ToolHub(autoload=False).bind(searching([*INVOICES, *OTHERS]))
    found = search(thinker, "invoice", 5)
    assert len(found["tools"]) == 5
    assert (found["matches"], found["more"]) == (30, True)
    assert found["note"].startswith("5 of 30 matching tools. More may match past this limit")


def test_an_answer_that_holds_every_match_says_there_is_no_more():
    thinker = ToolHub(autoload=False).bind(searching([*INVOICES, *OTHERS]))
    found = search(thinker, "meeting room", 5)
    assert [t["name"] for t in found["tools"]] == [t.name for t in OTHERS]
    assert (found["matches"], found["more"]) == (3, False)
    assert found["note"].startswith("3 of 3 matching tools. You can call")


def test_the_count_is_of_what_is_left_to_find():
    thinker = ToolHub(autoload=False).bind(searching([*INVOICES, *OTHERS]))
    search(thinker, "invoice", 20)  # granted: no longer in the deferred catalog
    found = search(thinker, "invoice", 20)
    assert (len(found["tools"]), found["matches"], found["more"]) == (10, 10, False)


CROWD = [
    tool(f"github_{verb}_{part}", f"{verb.capitalize()} {part.replace('_', ' ')} of a repository.")
    for part in ("issues", "issue_comments", "issue_labels", "issue_events", "issue_assignees")
    for verb in ("list", "get", "search", "update", "create", "close")
]
HELPDESK = tool(
    "tickets_search",
    "Search the helpdesk tickets (issues) that customers opened, with their comments, "
    "status and priority, newest first.",
)


def test_one_prefix_cannot_fill_the_top_five_when_another_matches_nearly_as_well():
    thinker = ToolHub(autoload=False).bind(searching([*CROWD, HELPDESK]))
    found = search(thinker, "list issue helpdesk", 5)
    names = [t["name"] for t in found["tools"]]
    assert names[0].startswith("github_list_")  # the best stays first
    assert "tickets_search" in names  # sixth as ranked, among the five diversified
    assert sum(n.startswith("github_") for n in names) == 4


def test_a_prefix_alone_keeps_its_order():
    plain = [t.name for t in CROWD if t.name.startswith("github_list_")]
    thinker = ToolHub(autoload=False).bind(searching(CROWD))
    found = search(thinker, "list", 5)
    assert [t["name"] for t in found["tools"]] == plain


class Plain:
    """A ranker of its own: every tool whose name holds a query word, in catalog order."""

    def __init__(self, matching: bool) -> None:
        self.with_matching = matching

    def build(self, documents: Any) -> Any:
        names = [d.name for d in documents]

        class Index:
            def search(self, query: str, limit: int) -> list[tuple[int, float]]:
                return [(i, 1.0) for i, n in enumerate(names) if query in n][:limit]

        index = Index()
        if self.with_matching:
            index.matching = lambda query: {i for i, n in enumerate(names) if query in n}  # type: ignore[attr-defined]
        return index


def test_another_rankers_index_counts_through_matching_or_says_it_cannot():
    for with_matching, expected in ((True, 30), (False, None)):
        cls = searching(INVOICES)
        cls.tool_ranker = Plain(with_matching)  # type: ignore[assignment]
        found = search(ToolHub(autoload=False).bind(cls), "invoice", 5)
        assert (len(found["tools"]), found["matches"], found["more"]) == (5, expected, True)
        assert found["note"].startswith("5 of 30" if expected else "5 matching tools. More")


def test_the_default_index_counts_what_it_searched():
    from toolpalette import LexicalRanker, ToolDocument

    documents = [ToolDocument(t.name, t.description, {}) for t in [*INVOICES, *OTHERS]]
    index = LexicalRanker().build(documents)
    hits, matched = index.search_counted("invoice", 5, left_out=frozenset({0, 1, 31}))
    assert len(hits) == 5
    assert matched == 28  # 30 invoices, two of them left out (31 is no invoice)
    assert index.search_counted("zebra", 5) == ([], 0)
