"""The ranker behind search_tools: terms, fields, ranks, ties, bounds, custom rankers.

The ranker is internal until the ``search_tools`` meta-tool offers it, so these are unit
tests of its module. Performance is measured in bench/bench_search.py, never here.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from toolpalette import tool
from toolpalette._search.ranking import (
    MAX_QUERY_CHARS,
    MAX_QUERY_TERMS,
    FieldWeights,
    LexicalRanker,
    TermCache,
    ToolDocument,
    ToolIndex,
    ToolRanker,
    documents_from,
    terms,
)
from toolpalette.testing import as_provider


def doc(name: str, description: str = "", **parameters: str) -> ToolDocument:
    """A tool with string parameters, each described by its value."""
    properties = {p: {"type": "string", "description": text} for p, text in parameters.items()}
    return ToolDocument(name, description, {"type": "object", "properties": properties})


def names(index: ToolIndex, documents: Sequence[ToolDocument], query: str, limit: int = 5):
    return [documents[p].name for p, _ in index.search(query, limit)]


CATALOG = [
    doc("read_file", "Read a text file and return its contents.", path="Where the file is."),
    doc("read_file_lines", "Read some lines of a text file.", path="The file.", start="Line."),
    doc("write_file", "Write text to a file, replacing it.", path="The file.", text="Text."),
    doc("file_reader", "Open files for reading.", path="The file."),
    doc("math.factorial", "The factorial of an integer.", n="The number."),
    doc("math.sqrt", "The square root of a number.", x="The number."),
    doc("factorial_table", "A table of factorials of integers up to n.", n="The largest."),
    doc("getWeatherForecast", "Tomorrow's forecast for a city.", city="The city's name."),
    doc("send-email", "Send an e-mail message.", to="Address.", body="The message text."),
    doc("list_events", "Calendar events of a day.", timezone="IANA time zone, e.g. Europe/Paris."),
]


@pytest.fixture(scope="module")
def index() -> ToolIndex:
    return LexicalRanker().build(CATALOG)


# --- Terms ---------------------------------------------------------------------------------


def test_identifiers_split_at_every_boundary_and_keep_their_whole() -> None:
    assert terms("snake_case_name") == ["snak", "cas", "nam", "snakecasename"]
    pieces = ["read", "fil"]
    assert terms("read_file") == [*pieces, "readfile"]
    assert terms("read.file") == terms("read-file") == terms("readFile") == terms("ReadFile")
    assert terms("READ_FILE") == terms("read_file")
    assert terms("__init__") == terms("init") == ["init"]
    # A run of capitals is one piece, up to the next word's capital.
    assert terms("getHTTPResponse") == ["get", "http", "respons", "gethttpresponse"]


def test_digits_are_pieces_of_their_own() -> None:
    assert terms("sha256sum") == ["sha", "256", "sum", "sha256sum"]
    assert terms("v2") == ["v", "2", "v2"]
    assert terms("utf-8") == ["utf", "8", "utf8"]
    assert terms("2024") == ["2024"]


def test_forms_of_a_word_fold_to_one_term() -> None:
    for forms in (
        ("file", "files", "File", "FILES"),
        ("query", "queries"),
        ("copy", "copies", "copied", "copying"),
        ("create", "creates", "created", "creating"),
        ("run", "running"),
        ("match", "matches", "matched"),
        ("process", "processes"),
    ):
        assert len({tuple(terms(f)) for f in forms}) == 1, forms
    # Short words, words with digits and words without a vowel before the ending stay.
    assert terms("bus") == ["bus"]
    assert terms("string") == ["string"]
    assert terms("status") != terms("stat")


def test_stop_words_and_punctuation_are_dropped() -> None:
    assert terms("the of and to a") == []
    assert terms("(files), and!") == terms("files")
    assert terms("the user's files") == terms("user files")
    assert terms("") == terms("   \n\t ") == []


def test_unicode_text_is_normalized_and_kept() -> None:
    assert terms("Café") == terms("café") == ["caf\u00e9"]
    assert terms("\uff26\uff49\uff4c\uff45") == terms("file")  # full-width letters
    assert terms("\ufb01le") == terms("file")  # the "fi" ligature
    assert terms("日本語 テキスト") == ["日本語", "テキスト"]
    assert terms("🙂 ⚙️") == []


# --- Ranking -------------------------------------------------------------------------------


def test_an_exact_name_ranks_that_tool_first(index: ToolIndex) -> None:
    for tool_name in ("read_file", "read_file_lines", "file_reader", "math.factorial"):
        assert names(index, CATALOG, tool_name)[0] == tool_name
    assert names(index, CATALOG, "getWeatherForecast")[0] == "getWeatherForecast"
    assert names(index, CATALOG, "please call send-email")[0] == "send-email"


def test_words_of_the_description_find_a_tool(index: ToolIndex) -> None:
    assert names(index, CATALOG, "square root")[0] == "math.sqrt"
    assert names(index, CATALOG, "what will the weather be tomorrow")[0] == "getWeatherForecast"
    assert names(index, CATALOG, "factorials")[:2] == ["math.factorial", "factorial_table"]


def test_parameter_descriptions_and_names_count(index: ToolIndex) -> None:
    # "zone" is only in list_events' parameter description, "timezone" its parameter name.
    assert names(index, CATALOG, "zone") == ["list_events"]
    assert names(index, CATALOG, "timezone") == ["list_events"]


def test_fields_weigh_as_the_weights_say() -> None:
    documents = [
        doc("tool_a", "Nothing here.", other="Mentions a widget."),
        doc("tool_b", "A widget maker."),
        doc("widget", "Makes things."),
        doc("tool_c", "Nothing either.", widget="The thing."),
        doc("tool_d", "Unrelated."),
    ]
    default = LexicalRanker().build(documents)
    assert names(default, documents, "widget") == ["widget", "tool_b", "tool_a", "tool_c"]
    params_first = LexicalRanker(FieldWeights(0.1, 0.2, 3.0, 1.0)).build(documents)
    assert names(params_first, documents, "widget") == ["tool_c", "tool_a", "tool_b", "widget"]
    # A zero weight ignores the field: the tool found only there is not found at all.
    no_names = LexicalRanker(FieldWeights(name=0.0)).build(documents)
    assert "widget" not in names(no_names, documents, "widget")


def test_scores_are_descending_and_each_result_matches(index: ToolIndex) -> None:
    found = index.search("read a file", 20)
    scores = [score for _, score in found]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    assert {CATALOG[p].name for p, _ in found} == {
        "read_file",
        "read_file_lines",
        "write_file",
        "file_reader",
    }


# --- Ties, determinism ---------------------------------------------------------------------


def test_ties_go_by_catalog_order_and_results_repeat() -> None:
    twin = ("Convert a currency amount.", "The amount.")
    documents = [doc(f"tool_{i}", "Unrelated words only.") for i in range(8)]
    for i in (6, 1, 4):
        documents[i] = doc(f"convert_{i}", twin[0], amount=twin[1])
    first = LexicalRanker().build(documents)
    second = LexicalRanker().build(list(documents))
    found = first.search("convert currency", 5)
    assert [p for p, _ in found] == [1, 4, 6]
    assert len({score for _, score in found}) == 1
    assert first.search("convert currency", 5) == found == second.search("convert currency", 5)


@pytest.mark.parametrize("others", [0, 1300], ids=["every tool matches", "a fifth matches"])
def test_ties_go_by_catalog_order_among_many_postings(others: int) -> None:
    # Enough postings that the search adds them up in a list, with a floor; the matches
    # are read back from the whole list, or from the set of tools touched.
    documents = [doc(f"tool_{i}", "Fetch the weather.") for i in range(350)]
    documents[300] = doc("weather", "Fetch the weather.")
    documents += [doc(f"other_{i}", "Something else.") for i in range(others)]
    index = LexicalRanker().build(documents)
    found = index.search("weather fetch", 6)
    assert [p for p, _ in found] == [300, 0, 1, 2, 3, 4]
    assert len({score for _, score in found[1:]}) == 1
    assert index.search("weather fetch", 6) == found
    assert len(index.search("weather fetch", 1000)) == 350


def test_concurrent_first_searches_agree_with_sequential_ones() -> None:
    documents = [doc(f"tool_{i}", f"Word{i % 37} and word{i % 11} text.") for i in range(400)]
    queries = [f"word{i % 37} word{i % 11} text" for i in range(200)]
    sequential = LexicalRanker().build(documents)
    expected = [sequential.search(q, 5) for q in queries]
    shared = LexicalRanker().build(documents)
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda q: shared.search(q, 5), queries))
    assert got == expected


def test_scoring_every_term_up_front_changes_no_result() -> None:
    documents = [doc(f"tool_{i}", f"Word{i % 37} and word{i % 11} text.") for i in range(400)]
    queries = ["text", "word5 word7", "tool_3", "word36 text tool"]
    lazy = LexicalRanker().build(documents)
    warm = LexicalRanker().build(documents)
    warm.warm()
    assert [warm.search(q, 5) for q in queries] == [lazy.search(q, 5) for q in queries]
    warm.warm()  # again: nothing left to do
    assert [warm.search(q, 5) for q in queries] == [lazy.search(q, 5) for q in queries]


def test_a_catalog_past_65536_tools_finds_its_last_tools() -> None:
    # Positions of up to 65,536 tools are held in 16 bits; a larger catalog needs more.
    size = 65_536 + 3
    documents = [ToolDocument(f"t{i}", "plain", {}) for i in range(size)]
    documents[-1] = doc("zeta_last", "The very last tool.")
    documents[65_535] = doc("eta_edge", "The last position that fits in 16 bits.")
    index = LexicalRanker().build(documents)
    assert names(index, documents, "zeta", 1) == ["zeta_last"]
    assert names(index, documents, "eta edge", 1) == ["eta_edge"]
    assert [p for p, _ in index.search("plain", 3)] == [0, 1, 2]


class CountingSchema(Mapping[str, Any]):
    """An input schema that counts how often the ranker reads it."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.reads = 0

    def __getitem__(self, key: str) -> Any:
        self.reads += 1
        return self.schema[key]

    def __iter__(self) -> Iterator[str]:
        self.reads += 1
        return iter(self.schema)

    def __len__(self) -> int:
        return len(self.schema)


def counted(name: str, description: str, **parameters: str) -> ToolDocument:
    plain = doc(name, description, **parameters)
    return ToolDocument(plain.name, plain.description, CountingSchema(dict(plain.input_schema)))


QUERIES = ["read file", "factorial", "weather city", "send message", "text lines", "tool_7"]


def test_a_rebuild_with_a_cache_finds_what_a_fresh_build_finds() -> None:
    ranker = LexicalRanker()
    cache = TermCache()
    first = [*CATALOG, *(doc(f"tool_{i}", f"Word{i % 7} text.") for i in range(50))]
    changed = [*first[:3], doc("read_file", "Open a file and read it."), *first[5:40]]
    changed += [doc("send-sms", "Send a text message.", to="Number.")]
    for documents in (first, changed, first, []):
        cached = ranker.build(documents, cache=cache)
        fresh = ranker.build(documents)
        assert [cached.search(q, 5) for q in QUERIES] == [fresh.search(q, 5) for q in QUERIES]
        assert len(cache) == len(documents)  # only the latest catalog is kept


def test_a_rebuild_reads_only_the_tools_it_has_not_seen() -> None:
    ranker = LexicalRanker()
    cache = TermCache()
    kept = [counted(f"tool_{i}", f"Word{i % 7} text.", path="A path.") for i in range(20)]
    ranker.build(kept, cache=cache)
    assert all(d.input_schema.reads for d in kept)
    for d in kept:
        d.input_schema.reads = 0
    new = counted("weather", "Tomorrow's weather.", city="The city.")
    renamed = ToolDocument("tool_0_renamed", kept[0].description, kept[0].input_schema)
    index = ranker.build([*kept, new, renamed], cache=cache)
    assert new.input_schema.reads > 0
    assert kept[0].input_schema.reads > 0  # the same schema under another name is read again
    assert [d.input_schema.reads for d in kept[1:]] == [0] * 19
    assert [p for p, _ in index.search("weather", 1)] == [20]
    assert [p for p, _ in index.search("renamed", 1)] == [21]


def test_a_cache_is_read_again_for_other_weights() -> None:
    cache = TermCache()
    documents = [counted("read_file", "Read a file.", path="Where it is.")]
    LexicalRanker().build(documents, cache=cache)
    documents[0].input_schema.reads = 0
    ranker = LexicalRanker(FieldWeights(parameter_names=0))
    index = ranker.build(documents, cache=cache)
    assert documents[0].input_schema.reads > 0
    assert index.search("path", 1) == []  # the field left out is not indexed


# --- Queries: empty, limits, bounds --------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "the of and", "?!.,", "🙂"])
def test_an_empty_or_meaningless_query_finds_nothing(index: ToolIndex, query: str) -> None:
    assert index.search(query, 5) == []


def test_a_query_with_no_known_term_finds_nothing(index: ToolIndex) -> None:
    assert index.search("zebra xylophone", 5) == []


def test_an_empty_catalog_finds_nothing() -> None:
    index = LexicalRanker().build([])
    assert len(index) == 0
    assert index.search("read file", 5) == []
    assert len(LexicalRanker().build(CATALOG)) == len(CATALOG)


def test_limit_bounds(index: ToolIndex) -> None:
    assert len(index.search("file", 1)) == 1
    assert len(index.search("file", 2)) == 2
    # Past the matches, only the matches come back.
    assert len(index.search("file", 20)) == 4
    assert len(index.search("file", 10**9)) == 4
    for limit in (0, -1, -7919):
        with pytest.raises(ValueError, match="limit") as refused:
            index.search("file", limit)
        assert str(limit) not in str(refused.value).replace("at least 1", "")


def test_only_the_first_characters_of_a_query_are_read(index: ToolIndex) -> None:
    padding = "zzz " * (MAX_QUERY_CHARS // 4)
    assert names(index, CATALOG, padding[:-1] + " factorial") == []
    assert names(index, CATALOG, padding[: MAX_QUERY_CHARS - 20] + " factorial")


def test_only_the_first_distinct_terms_of_a_query_count(index: ToolIndex) -> None:
    unknown = " ".join(f"unknown{i}" for i in range(MAX_QUERY_TERMS))
    assert index.search(unknown + " factorial", 5) == []
    assert index.search(" ".join(["factorial"] * 500), 5) == index.search("factorial", 5)


@pytest.mark.parametrize(
    "query",
    [
        "factorial " * 200_000,  # a megabyte of words
        "a_" * 500_000,  # a megabyte of one identifier
        "X" * 1_000_000,
        "\u0301" * 300_000 + "factorial",
        "💥" * 250_000,
        "\x00" * 100 + "factorial",
    ],
)
def test_hostile_queries_are_answered(index: ToolIndex, query: str) -> None:
    found = index.search(query, 5)
    assert isinstance(found, list)
    assert len(found) <= 5


def test_a_unicode_query_finds_unicode_text() -> None:
    documents = [doc("meteo", "Prévisions météo pour une ville."), doc("other", "Autre chose.")]
    index = LexicalRanker().build(documents)
    assert names(index, documents, "METEO?") == ["meteo"]
    assert names(index, documents, "la météo à Paris") == ["meteo"]


# --- Reading tools -------------------------------------------------------------------------


def test_nested_parameters_and_definitions_are_read() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {"owner": {"type": "string", "description": "Who owns it."}},
            },
            "rows": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"colour": {"type": "string", "description": "A hue."}},
                },
            },
            "place": {"anyOf": [{"$ref": "#/$defs/Place"}, {"type": "null"}]},
        },
        "$defs": {
            "Place": {
                "type": "object",
                "properties": {
                    "latitude": {"type": "number", "description": "Degrees north."},
                    "again": {"$ref": "#/$defs/Place"},  # a cycle: read once
                },
            }
        },
    }
    documents = [ToolDocument("finder", "Find things.", schema), doc("other", "Other.")]
    index = LexicalRanker().build(documents)
    for query in ("owner", "owns", "colour", "hue", "latitude", "degrees north"):
        assert names(index, documents, query) == ["finder"], query
    # The keywords themselves and unreferenced definitions are not words of the tool.
    assert names(index, documents, "object array anyOf") == []


def test_junk_in_a_schema_is_ignored() -> None:
    schema: Any = {
        "properties": {"good": {"description": "Kept."}, "odd": ["not", "a", "schema"], 3: {}},
        "items": [{"properties": {"inner": {"description": 5}}}, "junk"],
        "anyOf": "not a list",
        "$ref": "#/nowhere",
    }
    documents = [ToolDocument("junky", "", schema), doc("other", "Other.")]
    index = LexicalRanker().build(documents)
    for query in ("good", "kept", "odd", "inner", "3"):
        assert names(index, documents, query) == ["junky"], query
    for query in ("schema", "junk", "nowhere", "5"):
        assert names(index, documents, query) == [], query


def _word(i: int) -> str:
    """A distinct word per number, of letters no stemming touches."""
    letters = "bcfhjkmnpqrtvwxz"
    word = ""
    while True:
        i, digit = divmod(i, len(letters))
        word += letters[digit]
        if not i:
            return "zz" + word


def test_a_huge_schema_is_read_up_to_a_bound() -> None:
    properties = {_word(i): {"type": "string"} for i in range(5000)}
    documents = [ToolDocument("wide", "Many fields.", {"properties": properties}), doc("other")]
    index = LexicalRanker().build(documents)
    assert names(index, documents, _word(0)) == ["wide"]
    assert names(index, documents, _word(4999)) == []


def test_field_weights_and_parameters_are_checked() -> None:
    for weights in (
        {"name": -1.0},
        {"description": float("inf")},
        {"parameter_names": float("nan")},
    ):
        with pytest.raises(ValueError, match="weights"):
            FieldWeights(**weights)
    for parameters in ({"k1": 0.0}, {"k1": float("inf")}, {"b": -0.1}, {"b": 1.5}):
        with pytest.raises(ValueError, match="k1"):
            LexicalRanker(**parameters)
    # b = 1 with an empty field divides by nothing.
    index = LexicalRanker(b=1.0).build([doc("empty"), doc("full", "Some words.", p="Text.")])
    assert [p for p, _ in index.search("words", 5)] == [1]


def test_documents_come_from_providers() -> None:
    @tool(read_only=True)
    def convert_units(amount: float, unit: str) -> str:
        """Convert an amount between measurement units.

        Args:
            amount: How much, in the source unit.
            unit: Target unit, for instance kilometres.
        """
        return f"{amount} {unit}"

    @tool(read_only=True)
    def ping() -> str:
        """Answer pong."""
        return "pong"

    documents = documents_from([as_provider(convert_units), as_provider(ping)])
    assert [d.name for d in documents] == ["convert_units", "ping"]
    index = LexicalRanker().build(documents)
    assert names(index, documents, "kilometres") == ["convert_units"]
    assert names(index, documents, "pong") == ["ping"]


# --- Another ranker ------------------------------------------------------------------------


class _SubstringIndex:
    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        words = query[:MAX_QUERY_CHARS].lower().split()
        if not words:
            return []
        scores = [(i, float(sum(w in t for w in words))) for i, t in enumerate(self.texts)]
        ranked = sorted((s for s in scores if s[1] > 0), key=lambda s: (-s[1], s[0]))
        return ranked[:limit]


class SubstringRanker:
    """A ranker of a host's own, written against the protocol only."""

    def build(self, documents: Sequence[ToolDocument]) -> ToolIndex:
        return _SubstringIndex([f"{d.name} {d.description}".lower() for d in documents])


def _top(ranker: ToolRanker, documents: Sequence[ToolDocument], query: str) -> list[str]:
    """What a thinker will do with whichever ranker it is given."""
    return [documents[p].name for p, _ in ranker.build(documents).search(query, 3)]


def test_a_custom_ranker_honouring_the_protocol_plugs_in() -> None:
    assert _top(SubstringRanker(), CATALOG, "factorial") == ["math.factorial", "factorial_table"]
    assert _top(SubstringRanker(), CATALOG, "") == []
    assert _top(LexicalRanker(), CATALOG, "factorial") == ["math.factorial", "factorial_table"]
