"""Conversation: attached skills ride the preamble, once each, in a stable order."""

from __future__ import annotations

import pytest
from toolpalette import Conversation, Skill, SkillRegistry


def make(name, body="Body."):
    return Skill(name, f"About {name}.", bundle="io.example.ops", body=body)


def test_an_empty_conversation_has_only_the_host_preamble():
    assert Conversation().preamble == ""
    assert Conversation("You are helpful.").preamble == "You are helpful.\n"
    assert Conversation().attached == ()


def test_a_conversation_has_an_id():
    assert Conversation(id="thread-1").id == "thread-1"
    first, second = Conversation(), Conversation()
    assert first.id != second.id
    assert len(first.id) == 32


def test_attaching_adds_name_description_and_body():
    conversation = Conversation("Host text.")
    assert conversation.attach(make("deploy", "1. Build."))
    assert conversation.preamble == (
        "Host text.\n\n"
        '<skill id="io.example.ops/deploy" name="deploy">\n'
        "<description>About deploy.</description>\n\n"
        "1. Build.\n"
        "</skill>\n"
    )


def test_a_skill_is_attached_once():
    conversation = Conversation()
    skill = make("deploy")
    assert conversation.attach(skill) is True
    before = conversation.preamble
    assert conversation.attach(skill) is False
    assert conversation.attach(make("deploy", "another body, same id")) is False
    assert conversation.attached == ("io.example.ops/deploy",)
    assert conversation.preamble == before
    assert conversation.is_attached("io.example.ops/deploy")


def test_skills_are_appended_in_attachment_order_so_earlier_text_is_a_prefix():
    conversation = Conversation("Host.")
    conversation.attach(make("zeta"))
    first = conversation.preamble
    conversation.attach(make("alpha"))
    assert conversation.attached == ("io.example.ops/zeta", "io.example.ops/alpha")
    assert conversation.preamble.startswith(first.rstrip("\n"))


def test_the_preamble_is_deterministic_for_the_same_attachments():
    def build():
        conversation = Conversation("Host.")
        for name in ("b", "a", "c"):
            conversation.attach(make(name))
        return conversation.preamble

    assert build() == build()


def test_attaching_reads_the_body_so_a_bad_body_fails_at_admission(make_jar):
    info = make_jar(
        "io.example.sql", {"bad/SKILL.md": b"---\nname: bad\ndescription: d\n---\n\xff"}
    )
    skill = SkillRegistry.from_entry_points([info]).skill("io.example.sql/bad")
    conversation = Conversation()
    with pytest.raises(UnicodeDecodeError):
        conversation.attach(skill)
    assert conversation.attached == ()


def test_tools_guidance_follows_the_skills_one_section_each_in_the_order_given():
    conversation = Conversation("Host.")
    conversation.attach(make("deploy", "1. Build."))
    skills_only = conversation.preamble
    text = conversation.preamble_with([("query", "Read first.\n"), ("book", "  Ask before.  ")])
    assert text == (
        skills_only + "\n"
        '<tool name="query">\n'
        "Read first.\n"
        "</tool>\n\n"
        '<tool name="book">\n'
        "Ask before.\n"
        "</tool>\n"
    )
    assert conversation.preamble_with([]) == skills_only


def test_tools_guidance_alone_makes_a_preamble():
    assert Conversation().preamble_with([("query", "Read first.")]) == (
        '<tool name="query">\nRead first.\n</tool>\n'
    )
