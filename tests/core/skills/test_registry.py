"""SkillRegistry: jars from entry points, opened lazily, problems recorded not raised."""

from __future__ import annotations

import zipfile

import pytest
from toolpalette import Skill, SkillRegistry
from toolpalette._plugins.discovery import SKILLJAR_GROUP, EntryPointInfo
from toolpalette.errors import SkillNotFoundError


def kinds(registry):
    return [(p.kind, p.item) for p in registry.problems()]


def test_a_healthy_jar_serves_its_skills_by_full_id(make_jar, skill_md):
    info = make_jar(
        "io.example.sql",
        {
            "alpha/SKILL.md": skill_md("alpha", "First."),
            "beta/SKILL.md": skill_md("beta", "Second."),
        },
        distribution="example-sql",
        version="2.1",
    )
    registry = SkillRegistry.from_entry_points([info])
    assert registry.ids() == ["io.example.sql/alpha", "io.example.sql/beta"]
    skill = registry.skill("io.example.sql/beta")
    assert (skill.name, skill.bundle, skill.description) == ("beta", "io.example.sql", "Second.")
    assert (skill.distribution, skill.version) == ("example-sql", "2.1")
    assert skill.origin.module == info.module
    assert skill.body() == "# Body\n\nDo the thing."
    assert registry.problems() == []


def test_declaring_jars_opens_none(make_jar, skill_md):
    info = make_jar("io.example.sql", {"alpha/SKILL.md": skill_md("alpha")})
    registry = SkillRegistry.from_entry_points([info])
    assert registry.bundles() == ["io.example.sql"]
    assert registry.loaded_bundles() == []


def test_get_opens_only_the_bundle_of_the_id(make_jar, skill_md):
    wanted = make_jar("io.example.sql", {"alpha/SKILL.md": skill_md("alpha")})
    other = make_jar("io.example.ops", {"beta/SKILL.md": skill_md("beta")})
    registry = SkillRegistry.from_entry_points([wanted, other])
    assert registry.get("io.example.sql/alpha") is not None
    assert registry.loaded_bundles() == ["io.example.sql"]


@pytest.mark.parametrize("bad", [None, 3, "", "no-slash", "io.example.sql/missing", "nope.x/alpha"])
def test_get_returns_none_for_anything_it_does_not_hold(make_jar, skill_md, bad):
    info = make_jar("io.example.sql", {"alpha/SKILL.md": skill_md("alpha")})
    registry = SkillRegistry.from_entry_points([info])
    assert registry.get(bad) is None
    assert bad not in registry


def test_skill_raises_a_lookup_error_listing_the_available_ids(make_jar, skill_md):
    info = make_jar("io.example.sql", {"alpha/SKILL.md": skill_md("alpha")})
    registry = SkillRegistry.from_entry_points([info])
    with pytest.raises(SkillNotFoundError) as caught:
        registry.skill("io.example.sql/missing")
    assert isinstance(caught.value, LookupError)
    assert caught.value.available == ("io.example.sql/alpha",)
    assert "io.example.sql/alpha" in str(caught.value)


def test_by_prefix_follows_dot_boundaries_and_never_opens_other_jars(make_jar, skill_md):
    exact = make_jar("io.example", {"root/SKILL.md": skill_md("root")})
    child = make_jar("io.example.sql", {"alpha/SKILL.md": skill_md("alpha")})
    # A jar outside the prefix whose package would fail to import if it were opened.
    neighbour = make_jar(
        "io.examples", {"x/SKILL.md": skill_md("x")}, init="raise RuntimeError('opened')\n"
    )
    registry = SkillRegistry.from_entry_points([exact, child, neighbour])
    found = registry.by_prefix("io.example")
    assert [s.id for s in found] == ["io.example.sql/alpha", "io.example/root"]
    assert registry.loaded_bundles() == ["io.example", "io.example.sql"]
    assert registry.problems() == []


def test_a_trailing_dot_in_a_prefix_is_the_same_prefix(make_jar, skill_md):
    child = make_jar("io.example.sql", {"alpha/SKILL.md": skill_md("alpha")})
    registry = SkillRegistry.from_entry_points([child])
    assert [s.id for s in registry.by_prefix("io.example.")] == ["io.example.sql/alpha"]
    assert registry.by_prefix("io.exam") == []


def test_listing_reads_no_body(make_jar):
    # The body is not UTF-8: reading it would fail, so listing must stop before it.
    info = make_jar(
        "io.example.sql", {"alpha/SKILL.md": b"---\nname: alpha\ndescription: d\n---\n\xff\xfe"}
    )
    registry = SkillRegistry.from_entry_points([info])
    skill = registry.skill("io.example.sql/alpha")
    assert registry.problems() == []
    with pytest.raises(UnicodeDecodeError):
        skill.body()


def test_the_body_is_read_once_and_kept(make_jar, skill_md, tmp_path):
    info = make_jar("io.example.sql", {"alpha/SKILL.md": skill_md("alpha")})
    skill = SkillRegistry.from_entry_points([info]).skill("io.example.sql/alpha")
    assert skill.body() == "# Body\n\nDo the thing."
    (tmp_path / info.module / "alpha" / "SKILL.md").write_text("gone", encoding="utf-8")
    assert skill.body() == "# Body\n\nDo the thing."


def test_an_unparsable_skill_is_skipped_and_the_rest_of_the_jar_loads(make_jar, skill_md):
    info = make_jar(
        "io.example.sql",
        {
            "good/SKILL.md": skill_md("good"),
            "broken/SKILL.md": "---\nname: broken\ndescription: [unclosed\n---\nbody\n",
            "bare/SKILL.md": "# no front matter\n",
            "nodesc/SKILL.md": skill_md("nodesc", None),
        },
        distribution="example-sql",
        version="1.0",
    )
    registry = SkillRegistry.from_entry_points([info])
    assert registry.ids() == ["io.example.sql/good"]
    problems = registry.problems()
    assert {(p.kind, p.item) for p in problems} == {
        ("invalid-skill", "io.example.sql/bare"),
        ("invalid-skill", "io.example.sql/broken"),
        ("invalid-skill", "io.example.sql/nodesc"),
    }
    assert all(p.pack == "io.example.sql" and p.distribution == "example-sql 1.0" for p in problems)
    assert all(p.fatal for p in problems)


def test_cosmetic_problems_load_with_skill_warnings(make_jar, skill_md):
    info = make_jar(
        "io.example.sql",
        {
            "folder/SKILL.md": skill_md("other-name"),
            "Upper/SKILL.md": skill_md("Upper", "d", version="1"),
        },
    )
    registry = SkillRegistry.from_entry_points([info])
    assert registry.ids() == ["io.example.sql/Upper", "io.example.sql/other-name"]
    assert sorted(kinds(registry)) == [
        ("skill-warning", "io.example.sql/Upper"),
        ("skill-warning", "io.example.sql/Upper"),
        ("skill-warning", "io.example.sql/other-name"),
    ]
    assert not any(p.fatal for p in registry.problems())


def test_a_lowercase_skill_md_loads_with_a_warning(make_jar, skill_md):
    info = make_jar("io.example.sql", {"alpha/skill.md": skill_md("alpha")})
    registry = SkillRegistry.from_entry_points([info])
    assert registry.skill("io.example.sql/alpha").body() == "# Body\n\nDo the thing."
    [problem] = registry.problems()
    assert problem.kind == "skill-warning"
    assert "'skill.md'" in problem.reason


def test_folders_that_are_not_skills_are_passed_over(make_jar, skill_md):
    info = make_jar(
        "io.example.sql",
        {
            "alpha/SKILL.md": skill_md("alpha"),
            "_private/SKILL.md": skill_md("private"),
            ".hidden/SKILL.md": skill_md("hidden"),
            "notes/readme.md": "not a skill",
            "SKILL.md": skill_md("top"),
        },
    )
    registry = SkillRegistry.from_entry_points([info])
    assert registry.ids() == ["io.example.sql/alpha"]
    assert registry.problems() == []


def test_an_invalid_bundle_id_is_an_invalid_jar(make_jar, skill_md):
    info = make_jar("Not_A_Bundle", {"alpha/SKILL.md": skill_md("alpha")})
    registry = SkillRegistry.from_entry_points([info])
    assert registry.bundles() == []
    assert registry.ids() == []
    assert kinds(registry) == [("invalid-jar", None)]
    assert "reverse-DNS" in registry.problems()[0].reason


def test_a_jar_that_fails_to_import_is_reported(make_jar, skill_md):
    broken = make_jar(
        "io.example.bad", {"a/SKILL.md": skill_md("a")}, init="raise ImportError('boom')\n"
    )
    good = make_jar("io.example.good", {"b/SKILL.md": skill_md("b")})
    registry = SkillRegistry.from_entry_points([broken, good])
    assert registry.ids() == ["io.example.good/b"]
    [problem] = registry.problems()
    assert (problem.kind, problem.pack) == ("import", "io.example.bad")
    assert "boom" in problem.reason


def test_a_jar_naming_a_missing_package_is_reported(make_jar, skill_md):
    info = make_jar("io.example.sql", {"a/SKILL.md": skill_md("a")})
    missing = type(info)(info.group, "io.example.gone", "no_such_package_xyz", "gone", "1")
    registry = SkillRegistry.from_entry_points([info, missing])
    assert registry.ids() == ["io.example.sql/a"]
    assert kinds(registry) == [("import", None)]


def test_a_jar_naming_a_module_attribute_is_an_invalid_jar(make_jar, skill_md):
    info = make_jar("io.example.sql", {"a/SKILL.md": skill_md("a")})
    odd = type(info)(info.group, info.name, info.module + ":attr", "odd", "1")
    registry = SkillRegistry.from_entry_points([odd])
    assert registry.ids() == []
    assert kinds(registry) == [("invalid-jar", None)]


def test_two_jars_claiming_one_bundle_id_serve_neither(make_jar, skill_md):
    first = make_jar("io.example.sql", {"a/SKILL.md": skill_md("a")}, distribution="first-jar")
    second = make_jar("io.example.sql", {"b/SKILL.md": skill_md("b")}, distribution="second-jar")
    registry = SkillRegistry.from_entry_points([first, second])
    assert registry.bundles() == []
    assert registry.ids() == []
    problems = registry.problems()
    assert [(p.kind, p.distribution) for p in problems] == [
        ("collision", "first-jar 1.0"),
        ("collision", "second-jar 1.0"),
    ]
    assert "second-jar 1.0" in problems[0].reason
    assert "first-jar 1.0" in problems[1].reason


def test_two_folders_claiming_one_skill_id_serve_neither(make_jar, skill_md):
    info = make_jar(
        "io.example.sql",
        {
            "a/SKILL.md": skill_md("same"),
            "same/SKILL.md": skill_md("same"),
            "c/SKILL.md": skill_md("c"),
        },
    )
    registry = SkillRegistry.from_entry_points([info])
    assert registry.ids() == ["io.example.sql/c"]
    collisions = [p for p in registry.problems() if p.kind == "collision"]
    assert [p.item for p in collisions] == ["io.example.sql/same"]


def test_add_directory_serves_a_plain_folder(tmp_path, skill_md):
    (tmp_path / "skills" / "alpha").mkdir(parents=True)
    (tmp_path / "skills" / "alpha" / "SKILL.md").write_text(skill_md("alpha"), encoding="utf-8")
    registry = SkillRegistry()
    registry.add_directory("io.example.local", str(tmp_path / "skills"))
    assert registry.ids() == ["io.example.local/alpha"]
    assert registry.skill("io.example.local/alpha").distribution is None


def test_add_directory_on_a_missing_folder_is_reported(tmp_path):
    registry = SkillRegistry()
    registry.add_directory("io.example.local", tmp_path / "missing")
    assert registry.ids() == []
    assert kinds(registry) == [("invalid-jar", None)]


def test_problems_are_logged(make_jar, skill_md, caplog):
    info = make_jar("io.example.sql", {"a/SKILL.md": "no front matter"})
    with caplog.at_level("WARNING", logger="toolpalette.skills"):
        SkillRegistry.from_entry_points([info]).load_all()
    assert "io.example.sql/a" in caplog.text


def test_skills_built_in_code_are_checked_by_the_same_rules():
    registry = SkillRegistry()
    good = Skill("deploy", "Deploy it.", bundle="io.example.ops", body="Steps.")
    loud = Skill("Loud", "Shouts.", bundle="io.example.ops")
    empty = Skill("empty", "  ", bundle="io.example.ops")
    unbundled = Skill("x", "d", bundle="Not A Bundle")
    registry.add_skills(
        [good, loud, empty, unbundled, "garbage"], pack="ops", distribution="ops-pack", version="3"
    )
    assert registry.ids() == ["io.example.ops/Loud", "io.example.ops/deploy"]
    assert sorted(kinds(registry), key=str) == sorted(
        [
            ("skill-warning", "io.example.ops/Loud"),
            ("invalid-skill", "io.example.ops/empty"),
            ("invalid-skill", "Not A Bundle/x"),
            ("garbage", None),
        ],
        key=str,
    )
    assert (good.distribution, good.version, good.origin.pack) == ("ops-pack", "3", "ops")
    assert registry.bundles() == ["io.example.ops"]


def test_a_code_built_skill_that_takes_a_jar_skill_id_collides(make_jar, skill_md):
    info = make_jar(
        "io.example.sql", {"alpha/SKILL.md": skill_md("alpha")}, distribution="jar-dist"
    )
    registry = SkillRegistry.from_entry_points([info])
    registry.add_skills(
        [Skill("alpha", "Mine.", bundle="io.example.sql")], pack="p", distribution="pack-dist"
    )
    assert registry.get("io.example.sql/alpha") is None
    [problem] = registry.problems()
    assert problem.kind == "collision"
    assert "jar-dist 1.0" in problem.reason
    assert "pack-dist ?" in problem.reason


def test_a_folder_claiming_an_installed_bundle_id_collides(make_jar, skill_md, tmp_path):
    info = make_jar("io.example.sql", {"a/SKILL.md": skill_md("a")}, distribution="jar-dist")
    registry = SkillRegistry.from_entry_points([info])
    registry.add_directory("io.example.sql", tmp_path)
    assert registry.ids() == []
    problems = registry.problems()
    assert [(p.kind, p.distribution) for p in problems] == [
        ("collision", "jar-dist 1.0"),
        ("collision", None),
    ]
    assert "folder " in problems[0].reason


def test_problems_of_skills_without_a_distribution_name_none():
    registry = SkillRegistry()
    registry.add_skills([Skill("Loud", "d", bundle="io.example.ops")], pack="p", distribution=None)
    [problem] = registry.problems()
    assert (problem.kind, problem.pack, problem.distribution) == ("skill-warning", "p", None)


def test_a_non_ascii_lowercase_name_loads_clean(make_jar, skill_md):
    info = make_jar("io.example.sql", {"données/SKILL.md": skill_md("données")})
    registry = SkillRegistry.from_entry_points([info])
    assert registry.ids() == ["io.example.sql/données"]
    assert registry.problems() == []


def test_a_skill_folder_symlinked_out_of_the_jar_is_skipped(make_jar, skill_md, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "stolen"
    elsewhere.mkdir(parents=True)
    (elsewhere / "SKILL.md").write_text(skill_md("stolen"), encoding="utf-8")
    info = make_jar("io.example.sql", {"a/SKILL.md": skill_md("a")})
    try:
        (tmp_path / info.module / "stolen").symlink_to(elsewhere, target_is_directory=True)
    except OSError:
        pytest.skip("cannot create symlinks here")
    registry = SkillRegistry.from_entry_points([info])
    assert registry.ids() == ["io.example.sql/a"]
    assert kinds(registry) == [("invalid-skill", "io.example.sql/stolen")]


def test_a_jar_inside_a_zip_file_is_read_alike(tmp_path, monkeypatch, skill_md):
    archive = tmp_path / "jar.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zippedjar/__init__.py", "")
        zipped.writestr("zippedjar/alpha/SKILL.md", skill_md("alpha"))
        zipped.writestr("zippedjar/alpha/references/r.md", "ref")
    monkeypatch.syspath_prepend(str(archive))
    info = EntryPointInfo(SKILLJAR_GROUP, "io.example.zip", "zippedjar", "zip-jar", "1")
    registry = SkillRegistry.from_entry_points([info])
    skill = registry.skill("io.example.zip/alpha")
    assert registry.problems() == []
    assert skill.body() == "# Body\n\nDo the thing."
    assert skill.resources() == ["references/r.md"]
    assert skill.read_text("references/r.md") == "ref"
    with pytest.raises(ValueError, match="resource path"):
        skill.resource("../alpha/SKILL.md")
