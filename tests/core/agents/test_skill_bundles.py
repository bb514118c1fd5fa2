"""A skilljar kept whole: one catalog entry, and asking for it attaches all of its skills.

``SkillSelector().prefix(x, bundle=True)`` shows each jar under ``x`` as one entry (its
bundle id, and its distribution's summary, else its skills' names), in
``request_skill``'s enum and ``search_skills``'s results alike.
"""

from __future__ import annotations

from typing import Any

from toolpalette import Skill, SkillSelector, Thinker, ToolHub


def thinker_class(skills: SkillSelector, mode: str) -> type[Thinker]:
    namespace: dict[str, Any] = {
        "tool_search": mode,
        "declare_skills": classmethod(lambda cls: skills),
    }
    return type("Jarred", (Thinker,), namespace)


def test_installed_skilljars_are_one_entry_each_with_their_summary():
    hub = ToolHub()
    cls = thinker_class(SkillSelector().prefix("io.toolpalette", bundle=True), "enum")
    thinker = hub.bind(cls)
    [request] = [t for t in thinker.begin_turn().tools if t.name == "request_skill"]
    choices = request.input_schema["properties"]["skills"]["items"]["anyOf"]
    listed = {c["enum"][0]: c.get("description", "") for c in choices}
    assert set(listed) == {"io.toolpalette.files", "io.toolpalette.sql"}
    assert "SQLite" in listed["io.toolpalette.sql"]  # the distribution's summary
    outcome = thinker.admit("skill", ["io.toolpalette.sql"])
    assert outcome["granted"] == [
        "io.toolpalette.sql/explore-sqlite-schema",
        "io.toolpalette.sql/write-parameterized-migrations",
    ]
    assert outcome["bundles"] == {"io.toolpalette.sql": outcome["granted"]}
    assert set(thinker.conversation.attached) == set(outcome["granted"])


def test_one_search_finds_a_jar_and_attaches_its_skills():
    hub = ToolHub(autoload=False)
    jar = [
        Skill("write-sql", "Write safe SQL queries.", bundle="io.example.db", body="Bind."),
        Skill("migrate", "Change a schema safely.", bundle="io.example.db", body="Back up."),
    ]
    other = Skill("tidy-notes", "Keep meeting notes tidy.", bundle="io.example.notes", body="x")
    hub.skills().add_skills([*jar, other], pack="code", distribution=None)
    selector = SkillSelector().prefix("io.example.db", bundle=True).skill(other.id)
    thinker = hub.bind(thinker_class(selector, "search"))
    thinker.begin_turn()
    found = thinker.search("skill", "change the database schema", 5)
    [bundle] = found["bundles"]
    assert bundle == {
        "name": "io.example.db",
        "description": "Skills of io.example.db: migrate, write-sql.",  # a prefix: by id
        "skills": ["io.example.db/migrate", "io.example.db/write-sql"],
    }
    assert [s["name"] for s in found["skills"]] == bundle["skills"]
    assert found["matches"] == 1
    preamble = thinker.begin_turn().preamble
    assert "Bind." in preamble
    assert "Back up." in preamble
    assert other.id not in thinker.conversation.attached
