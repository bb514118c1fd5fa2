"""Reading SKILL.md: front matter alone, safe YAML, the body on demand."""

from __future__ import annotations

import io

import pytest
from toolpalette._skills.loader import (
    MAX_FRONT_MATTER_BYTES,
    FrontMatterError,
    parse_front_matter,
    read_front_matter,
    split_body,
)

FRONT = b"---\nname: x\ndescription: y\n---\n"


def test_reading_front_matter_stops_at_the_closing_fence():
    stream = io.BytesIO(FRONT + b"# Body\n" + b"z" * 100_000)
    assert read_front_matter(stream) == "name: x\ndescription: y\n"
    assert stream.tell() == len(FRONT)


def test_a_bom_and_crlf_line_endings_are_accepted():
    stream = io.BytesIO(b"\xef\xbb\xbf---\r\nname: x\r\n---\r\nbody")
    assert parse_front_matter(read_front_matter(stream))[0] == {"name": "x"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"# Just markdown\n", "no front matter"),
        (b"", "no front matter"),
        (b"---\nname: x\n", "not closed"),
        (b"---\n" + b"a: b\n" * (MAX_FRONT_MATTER_BYTES // 4), "longer than"),
        (b"---\nname: \xff\n---\n", "not UTF-8"),
    ],
)
def test_front_matter_that_cannot_be_found(data, message):
    with pytest.raises(FrontMatterError, match=message):
        read_front_matter(io.BytesIO(data))


def test_plain_scalars_stay_strings():
    text = (
        "version: 1.10\nupdated: 2024-05-01\nlicense: no\ncount: 007\n"
        "when: 2001-12-14t21:59:43.10-05:00\n"
    )
    data, warnings = parse_front_matter(text)
    assert data == {
        "version": "1.10",
        "updated": "2024-05-01",
        "license": "no",
        "count": "007",
        "when": "2001-12-14t21:59:43.10-05:00",
    }
    assert warnings == []


def test_empty_values_are_null():
    assert parse_front_matter("license:\nother: ~\n")[0] == {"license": None, "other": None}


@pytest.mark.parametrize(
    "text",
    [
        "x: !!python/object/apply:os.system ['echo hi']\n",
        "x: !!python/name:os.system\n",
        "x: !custom thing\n",
    ],
)
def test_tags_that_would_build_objects_are_refused(text):
    with pytest.raises(FrontMatterError, match="not valid YAML"):
        parse_front_matter(text)


@pytest.mark.parametrize("text", ["- a\n- b\n", "just text\n"])
def test_front_matter_must_be_a_mapping(text):
    with pytest.raises(FrontMatterError, match="mapping"):
        parse_front_matter(text)


def test_unparsable_yaml_names_the_file_line():
    # The parser trips on the third front-matter line, which is line 4 of SKILL.md.
    with pytest.raises(FrontMatterError, match=r"line 4, column \d+"):
        parse_front_matter("name: x\ndescription: [unclosed\nlicense: y\n")


def test_an_unquoted_colon_value_is_forgiven_with_a_warning():
    data, warnings = parse_front_matter("name: x\ndescription: Use when: you need it\n")
    assert data == {"name": "x", "description": "Use when: you need it"}
    assert warnings == [
        "front matter parsed only after quoting; quote the value of description (it contains ': ')"
    ]


def test_block_scalars_parse():
    data, _ = parse_front_matter("description: |-\n  line one\n  line two\n")
    assert data == {"description": "line one\nline two"}


def test_split_body_returns_what_follows_the_front_matter():
    assert split_body(FRONT + b"\n\n# Title\n\ntext\n\n") == "# Title\n\ntext"


def test_split_body_keeps_later_fences():
    assert split_body(FRONT + b"a\n---\nb\n") == "a\n---\nb"


def test_split_body_refuses_a_file_without_front_matter():
    with pytest.raises(FrontMatterError):
        split_body(b"# Title\n")
