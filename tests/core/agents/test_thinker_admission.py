"""The hub's admission door: hooks, policy, approvals, the grant record, and what lands when.

A model asks with request_tools / request_skill (or a host calls ``thinker.admit``); the
answer passes the catalog, the read-only binding, the ``toolpalette_admit`` hook and the
policy, and every decision goes on ``hub.grants()`` and to ``toolpalette_grant``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from toolpalette import (
    Approval,
    Conversation,
    Decision,
    GrantRecord,
    Skill,
    SkillSelector,
    Thinker,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    hookimpl,
    tool,
)
from toolpalette.testing import await_until

RAN: list[str] = []


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather for a city."""
    RAN.append("weather")
    return f"sunny in {city}"


@tool
def send_mail(to: str) -> str:
    """Send an e-mail to one address."""
    RAN.append("send_mail")
    return f"sent to {to}"


@tool(read_only=True)
def read_page(url: str) -> str:
    """Fetch a web page."""
    RAN.append("read_page")
    return url


SKILLS = [
    Skill("write-sql", "Write safe SQL.", bundle="io.example.db", body="Always bind values."),
    Skill("tidy-notes", "Keep notes tidy.", bundle="io.example.notes", body="One per topic."),
]


class Assistant(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return (
            ToolSelector()
            .tool(weather)
            .tool(send_mail, deferred=True)
            .tool(read_page, deferred=True)
        )

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        return SkillSelector().prefix("io.example")


class Auditor(Assistant):
    read_only = True


class NoMailGrants(ToolPolicy):
    """Offers send_mail in the catalog but denies granting it."""

    def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
        return Decision.DENY if name == "send_mail" else Decision.ALLOW


class Recorder:
    """A plugin that keeps every grant record delivered to the hook."""

    def __init__(self) -> None:
        self.records: list[GrantRecord] = []

    @hookimpl
    def toolpalette_grant(self, record: GrantRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def hub(recorder: Recorder) -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    hub.skills().add_skills(SKILLS, pack="code", distribution=None)
    hub.add_plugin(recorder, name="recorder")
    return hub


def decisions(hub: ToolHub) -> list[tuple[str, str, str]]:
    return [(g.kind, g.name, g.decision) for g in hub.grants()]


def add_admit_hook(hub: ToolHub, verdict: Any) -> list[tuple[str, str]]:
    asked: list[tuple[str, str]] = []

    class Gate:
        @hookimpl
        def toolpalette_admit(self, thinker: Thinker, kind: str, name: str) -> Any:
            asked.append((kind, name))
            if isinstance(verdict, BaseException):
                raise verdict
            return verdict

    hub.add_plugin(Gate(), name="gate")
    return asked


# -- the per-turn offer --------------------------------------------------------------


async def test_an_admitted_tool_can_be_called_at_once_and_is_offered_from_the_next_turn(
    hub: ToolHub,
) -> None:
    assistant = hub.bind(Assistant)
    turn = assistant.begin_turn()
    result = await assistant.call("request_tools", {"names": ["send_mail"]})
    outcome = json.loads(result.text)
    assert outcome["granted"] == ["send_mail"]
    assert outcome["note"] == (
        "Granted tools can be called now and are offered from your next turn."
    )
    assert "send_mail" not in turn.tool_names  # this turn's offer to the model is fixed
    assert "send_mail" not in [s["name"] for s in turn.schemas("anthropic")]
    ran = await assistant.call("send_mail", {"to": "a@example.org"})
    assert ran.status == 200
    assert RAN == ["send_mail"]
    following = assistant.begin_turn()
    assert "send_mail" in following.tool_names
    assert "send_mail" in [s["name"] for s in following.schemas("anthropic")]
    assert following.version > turn.version
    assert (await assistant.call("send_mail", {"to": "b@example.org"})).status == 200


async def test_a_skill_lands_in_the_preamble_from_the_next_turn_once(hub: ToolHub) -> None:
    assistant = hub.bind(Assistant, Conversation("You help with data."))
    turn = assistant.begin_turn()
    assert turn.preamble == "You help with data.\n"
    await assistant.call("request_skill", {"skills": ["io.example.notes/tidy-notes"]})
    assert turn.preamble == "You help with data.\n"  # this turn's offer is fixed
    second = assistant.begin_turn()
    for part in ('name="tidy-notes"', "Keep notes tidy.", "One per topic."):
        assert second.preamble.count(part) == 1, part
    assert second.preamble.startswith(turn.preamble.rstrip("\n"))
    await assistant.call("request_skill", {"skills": ["io.example.db/write-sql"]})
    outcome = assistant.admit("skill", ["io.example.notes/tidy-notes"])
    assert outcome["already_present"] == ["io.example.notes/tidy-notes"]
    third = assistant.begin_turn()
    assert third.preamble.startswith(second.preamble.rstrip("\n"))
    assert third.preamble.count("One per topic.") == 1
    assert third.preamble.index("tidy-notes") < third.preamble.index("write-sql")
    assert assistant.begin_turn().preamble == third.preamble
    # request_skill's catalog is gone with its last member.
    assert "request_skill" not in third.tool_names


def test_the_preamble_text_is_deterministic(hub: ToolHub) -> None:
    texts = []
    for _ in range(2):
        assistant = hub.bind(Assistant, Conversation("Base."))
        assistant.begin_turn()
        assistant.admit("skill", ["io.example.db/write-sql", "io.example.notes/tidy-notes"])
        texts.append(assistant.begin_turn().preamble)
    assert texts[0] == texts[1]
    assert texts[0].startswith('Base.\n\n<skill id="io.example.db/write-sql"')


# -- the toolpalette_admit hook ---------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "reason"),
    [("mail is off today", "mail is off today"), (False, "refused by a host hook")],
)
async def test_the_admit_hook_refuses_with_its_reason(
    hub: ToolHub, verdict: object, reason: str
) -> None:
    asked = add_admit_hook(hub, verdict)
    assistant = hub.bind(Assistant)
    assistant.begin_turn()
    result = await assistant.call("request_tools", {"names": ["send_mail"]})
    assert result.status == 200
    assert json.loads(result.text)["refused"] == [{"name": "send_mail", "reason": reason}]
    assert asked == [("tool", "send_mail")]
    assert "send_mail" not in assistant.begin_turn().tool_names
    assert hub.grants()[-1].reason == reason


def test_an_admit_hook_allow_still_passes_the_policy(hub: ToolHub) -> None:
    add_admit_hook(hub, True)
    assistant = hub.bind(Assistant, policy=NoMailGrants())
    assistant.begin_turn()
    outcome = assistant.admit("tool", ["send_mail", "read_page"])
    assert outcome["granted"] == ["read_page"]
    assert outcome["refused"] == [{"name": "send_mail", "reason": "denied by policy"}]


def test_a_denied_name_is_kept_out_of_the_catalog(hub: ToolHub) -> None:
    assistant = hub.bind(Assistant, policy=ToolPolicy(deny=["send_mail"]))
    turn = assistant.begin_turn()
    [meta] = [p for p in turn.tools if p.name == "request_tools"]
    members = meta.input_schema["properties"]["names"]["items"]["anyOf"]
    assert [m["enum"][0] for m in members] == ["read_page"]
    outcome = assistant.admit("tool", ["send_mail"])
    assert outcome["refused"] == [
        {"name": "send_mail", "reason": "not requestable here; you may request: read_page"}
    ]


def test_an_admit_hook_with_no_opinion_lets_the_request_through(hub: ToolHub) -> None:
    asked = add_admit_hook(hub, None)
    assistant = hub.bind(Assistant)
    assistant.begin_turn()
    assert assistant.admit("skill", ["io.example.db/write-sql"])["granted"] == [
        "io.example.db/write-sql"
    ]
    assert asked == [("skill", "io.example.db/write-sql")]


async def test_a_raising_admit_hook_refuses_and_is_on_the_record(hub: ToolHub) -> None:
    # Regression: the hook's exception escaped admit(), so request_tools answered 500
    # and the request never reached the grant record.
    add_admit_hook(hub, RuntimeError("the gate is broken"))
    assistant = hub.bind(Assistant)
    assistant.begin_turn()
    result = await assistant.call("request_tools", {"names": ["send_mail"]})
    assert result.status == 200, result.text
    refused = json.loads(result.text)["refused"]
    assert [r["name"] for r in refused] == ["send_mail"]
    assert "gate is broken" not in result.text
    assert decisions(hub) == [("tool", "send_mail", "refused")]


def test_the_hook_is_not_asked_about_names_off_the_catalog(hub: ToolHub) -> None:
    asked = add_admit_hook(hub, True)
    assistant = hub.bind(Assistant)
    assistant.begin_turn()
    assistant.admit("tool", ["nope", "weather"])
    assert asked == []


# -- the policy and approvals -----------------------------------------------------------


def test_a_policy_deny_refuses_a_grant(hub: ToolHub) -> None:
    assistant = hub.bind(Assistant, policy=NoMailGrants())
    assistant.begin_turn()
    outcome = assistant.admit("tool", ["send_mail"])
    assert outcome["refused"] == [{"name": "send_mail", "reason": "denied by policy"}]
    assert decisions(hub) == [("tool", "send_mail", "refused")]


@pytest.mark.parametrize("approve", [True, False])
def test_a_policy_ask_makes_a_grant_wait_for_a_person(hub: ToolHub, approve: bool) -> None:
    told: list[Approval] = []
    assistant = hub.bind(Assistant, policy=ToolPolicy(ask=["send_mail"]), approver=told.append)
    assistant.begin_turn()
    outcome = assistant.admit("tool", ["send_mail"])
    assert (outcome["granted"], outcome["pending"]) == ([], ["send_mail"])
    [approval] = assistant.pending_approvals()
    assert told == [approval]
    assert (approval.kind, approval.name, approval.input, approval.turn) == (
        "tool",
        "send_mail",
        None,
        1,
    )
    assert "send_mail" not in assistant.begin_turn().tool_names
    assert assistant.resolve_approval(approval.token, approve=approve) is approval
    assert assistant.pending_approvals() == []
    assert ("send_mail" in assistant.begin_turn().tool_names) is approve
    assert decisions(hub) == [
        ("tool", "send_mail", "pending"),
        ("tool", "send_mail", "granted" if approve else "refused"),
    ]
    with pytest.raises(KeyError):
        assistant.resolve_approval(approval.token, approve=True)


def test_two_approvals_for_one_name_make_one_grant(hub: ToolHub) -> None:
    # Regression: each approval recorded a grant, two records for one effective grant.
    assistant = hub.bind(Assistant, policy=ToolPolicy(ask=["send_mail"]))
    assistant.begin_turn()
    assistant.admit("tool", ["send_mail"])
    assistant.admit("tool", ["send_mail"])
    for approval in assistant.pending_approvals():
        assistant.resolve_approval(approval.token, approve=True)
    granted = [g for g in hub.grants() if g.decision == "granted"]
    assert [g.name for g in granted] == ["send_mail"]


def test_an_unknown_token_is_a_key_error(hub: ToolHub) -> None:
    with pytest.raises(KeyError):
        hub.bind(Assistant).resolve_approval("no-such-token", approve=True)


async def _paused_call(
    assistant: Thinker, told: list[Approval], name: str, args: dict[str, Any]
) -> asyncio.Task[Any]:
    task = asyncio.ensure_future(assistant.call(name, args))
    await await_until(lambda: told, timeout=10, message="the approver was asked")
    return task


@pytest.mark.parametrize("approve", [True, False])
async def test_a_policy_ask_pauses_a_call_until_resolved(hub: ToolHub, approve: bool) -> None:
    told: list[Approval] = []
    assistant = hub.bind(Assistant, policy=ToolPolicy(ask_for_mutating=True), approver=told.append)
    assistant.begin_turn()
    assistant.admit("tool", ["send_mail"])  # the grant asks first
    assistant.resolve_approval(told.pop().token, approve=True)
    assistant.begin_turn()
    assert (await assistant.call("weather", {"city": "Oslo"})).status == 200  # not asked
    task = await _paused_call(assistant, told, "send_mail", {"to": "b@example.org"})
    assert not task.done()  # paused on its approval, the tool not run
    assert RAN == ["weather"]
    [approval] = assistant.pending_approvals()
    assert (approval.kind, approval.name, dict(approval.input or {}), approval.turn) == (
        "call",
        "send_mail",
        {"to": "b@example.org"},
        2,
    )
    assistant.resolve_approval(approval.token, approve=approve)
    result = await asyncio.wait_for(task, 10)
    if approve:
        assert (result.status, RAN) == (200, ["weather", "send_mail"])
    else:
        assert (result.status, result.code) == (403, "denied")
        assert RAN == ["weather"]
    assert hub.grants()[-1].kind == "call"
    assert hub.grants()[-1].name == "send_mail"
    assert hub.grants()[-1].decision == ("granted" if approve else "refused")
    assert assistant.pending_approvals() == []


async def test_an_approval_can_come_from_another_thread(hub: ToolHub) -> None:
    told: list[Approval] = []
    assistant = hub.bind(Assistant, policy=ToolPolicy(ask=["weather"]), approver=told.append)
    assistant.begin_turn()
    task = await _paused_call(assistant, told, "weather", {"city": "Lyon"})
    worker = threading.Thread(
        target=assistant.resolve_approval, args=(told[0].token,), kwargs={"approve": True}
    )
    worker.start()
    worker.join()
    assert (await asyncio.wait_for(task, 10)).status == 200


async def test_an_approver_may_answer_at_once(hub: ToolHub) -> None:
    holder: list[Thinker] = []

    def approve_now(approval: Approval) -> None:
        holder[0].resolve_approval(approval.token, approve=True)

    assistant = hub.bind(Assistant, policy=ToolPolicy(ask=["weather"]), approver=approve_now)
    holder.append(assistant)
    assistant.begin_turn()
    result = await asyncio.wait_for(assistant.call("weather", {"city": "Rome"}), 10)
    assert result.status == 200


async def test_a_denied_call_never_runs(hub: ToolHub) -> None:
    assistant = hub.bind(Assistant, policy=ToolPolicy(deny=["read_page"]))
    assistant.begin_turn()
    assert "read_page" not in assistant.begin_turn().tool_names
    outcome = assistant.admit("tool", ["read_page"])
    assert outcome["granted"] == []
    result = await assistant.call("read_page", {"url": "https://example.org"})
    assert result.is_error
    assert RAN == []


async def test_an_invalid_call_is_refused_before_anyone_is_asked(hub: ToolHub) -> None:
    told: list[Approval] = []
    assistant = hub.bind(Assistant, policy=ToolPolicy(ask=["weather"]), approver=told.append)
    assistant.begin_turn()
    result = await assistant.call("weather", {"city": 3})
    assert result.status == 400
    assert told == []


def test_a_read_only_thinker_cannot_be_granted_a_mutating_tool(hub: ToolHub) -> None:
    auditor = hub.bind(Auditor, policy=ToolPolicy(ask=["send_mail"]))
    auditor.begin_turn()
    outcome = auditor.admit("tool", ["send_mail", "read_page"])
    assert outcome["granted"] == ["read_page"]
    assert outcome["refused"][0]["name"] == "send_mail"
    assert auditor.pending_approvals() == []  # refused before the policy is asked


# -- the record ------------------------------------------------------------------------


async def test_every_decision_is_recorded_and_delivered(hub: ToolHub, recorder: Recorder) -> None:
    add_admit_hook(hub, None)
    conversation = Conversation(id="conv-1")
    assistant = hub.bind(Assistant, conversation, policy=ToolPolicy(ask=["read_page"]))
    assistant.begin_turn()
    assistant.admit("tool", ["send_mail", "read_page", "weather", "nope"])
    assistant.begin_turn()
    assistant.admit("skill", ["io.example.db/write-sql"])
    assert decisions(hub) == [
        ("tool", "send_mail", "granted"),
        ("tool", "read_page", "pending"),
        ("tool", "weather", "already_present"),
        ("tool", "nope", "refused"),
        ("skill", "io.example.db/write-sql", "granted"),
    ]
    assert recorder.records == hub.grants()
    records = hub.grants()
    assert {r.thinker for r in records} == {f"{__name__}.Assistant"}
    assert {r.conversation for r in records} == {"conv-1"}
    assert [r.turn for r in records] == [1, 1, 1, 1, 2]
    assert [bool(r.reason) for r in records] == [False, True, False, True, False]
    times = [r.time for r in records]
    assert times == sorted(times)


def test_a_raising_grant_hook_does_not_stop_the_record(hub: ToolHub, recorder: Recorder) -> None:
    class Broken:
        @hookimpl
        def toolpalette_grant(self, record: GrantRecord) -> None:
            raise RuntimeError("sink down")

    hub.add_plugin(Broken(), name="broken")
    assistant = hub.bind(Assistant)
    assistant.begin_turn()
    assert assistant.admit("tool", ["send_mail"])["granted"] == ["send_mail"]
    assert len(hub.grants()) == len(recorder.records) == 1


def test_concurrent_identical_requests_make_one_grant(hub: ToolHub) -> None:
    assistant = hub.bind(Assistant)
    assistant.begin_turn()
    start = threading.Barrier(16)
    outcomes: list[dict[str, Any]] = []

    def ask() -> None:
        start.wait()
        outcomes.append(assistant.admit("tool", ["send_mail"]))

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(o["granted"] == ["send_mail"] for o in outcomes) == 1
    assert sum(o["already_present"] == ["send_mail"] for o in outcomes) == 15
    assert [d for d in decisions(hub) if d[2] == "granted"] == [("tool", "send_mail", "granted")]
    assert len(hub.grants()) == 16


async def test_concurrent_identical_model_requests_make_one_grant(hub: ToolHub) -> None:
    assistant = hub.bind(Assistant)
    assistant.begin_turn()
    calls = [assistant.call("request_tools", {"names": ["read_page"]}) for _ in range(8)]
    results = await asyncio.gather(*calls)
    assert all(r.status == 200 for r in results)
    granted = [json.loads(r.text)["granted"] for r in results]
    assert granted.count(["read_page"]) == 1
    assert [d for d in decisions(hub) if d[2] == "granted"] == [("tool", "read_page", "granted")]


def test_an_approval_for_a_name_that_left_the_catalog_grants_nothing(hub: ToolHub) -> None:
    # Regression: the record said granted although nothing was admitted, because the
    # name was no longer in the catalog when the person approved.
    assistant = hub.bind(Assistant, policy=ToolPolicy(ask=["read_page"]))
    assistant.begin_turn()
    assistant.admit("tool", ["read_page"])
    [approval] = assistant.pending_approvals()
    hub.register_system_tool(read_page)  # now offered to everyone: out of the catalog
    assistant.begin_turn()
    assistant.resolve_approval(approval.token, approve=True)
    last = hub.grants()[-1]
    assert (last.name, last.decision) == ("read_page", "refused")
    assert "catalog" in last.reason
    assert [g for g in hub.grants() if g.decision == "granted"] == []


def test_a_denied_meta_tool_is_not_offered(hub: ToolHub) -> None:
    # Regression: the meta-tools skipped policy.offers, so a host that denied
    # request_tools still saw it offered (and every call of it refused).
    policy = ToolPolicy(deny=["request_tools", "request_skill"])
    turn = hub.bind(Assistant, policy=policy).begin_turn()
    assert turn.tool_names == ("weather",)


class GrantPolicy(ToolPolicy):
    """Answers every grant with a fixed value (or raises it)."""

    def __init__(self, answer: object) -> None:
        super().__init__()
        self.answer = answer

    def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Any:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    "answer",
    ["deny", False, "maybe", 0, RuntimeError("policy store down")],
    ids=["deny-string", "false", "unknown-string", "zero", "raises"],
)
def test_a_grant_policy_answer_that_is_not_allow_refuses(hub: ToolHub, answer: object) -> None:
    # Regression: only Decision.DENY and Decision.ASK were read, so a policy answering
    # "deny" or False (as the call policy may) granted, and one that raised left no record.
    assistant = hub.bind(Assistant, policy=GrantPolicy(answer))
    assistant.begin_turn()
    outcome = assistant.admit("tool", ["send_mail"])
    assert outcome["granted"] == []
    assert [r["name"] for r in outcome["refused"]] == ["send_mail"]
    assert decisions(hub) == [("tool", "send_mail", "refused")]
    assert "send_mail" not in assistant.begin_turn().tool_names


@pytest.mark.parametrize("answer", [Decision.ALLOW, "allow", True, None])
def test_a_grant_policy_allow_in_any_spelling_grants(hub: ToolHub, answer: object) -> None:
    assistant = hub.bind(Assistant, policy=GrantPolicy(answer))
    assistant.begin_turn()
    assert assistant.admit("tool", ["send_mail"])["granted"] == ["send_mail"]


def test_a_grant_policy_ask_as_a_string_asks(hub: ToolHub) -> None:
    assistant = hub.bind(Assistant, policy=GrantPolicy("ask"))
    assistant.begin_turn()
    assert assistant.admit("tool", ["send_mail"])["pending"] == ["send_mail"]


def test_a_raising_approver_refuses_the_grant_and_leaves_nothing_pending(hub: ToolHub) -> None:
    def broken(_: Approval) -> None:
        raise RuntimeError("pager down")

    assistant = hub.bind(Assistant, policy=ToolPolicy(ask=["send_mail"]), approver=broken)
    assistant.begin_turn()
    outcome = assistant.admit("tool", ["send_mail"])
    assert outcome["pending"] == []
    assert [r["name"] for r in outcome["refused"]] == ["send_mail"]
    assert assistant.pending_approvals() == []
    assert decisions(hub) == [("tool", "send_mail", "refused")]


async def test_a_skill_whose_body_cannot_be_read_is_refused_on_the_record(
    hub: ToolHub, tmp_path: Path
) -> None:
    # Regression: attaching read the body inside admit; an unreadable SKILL.md made
    # request_skill a 500 with nothing recorded.
    folder = tmp_path / "vanishing"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: vanishing\ndescription: Gone soon.\n---\n\nBody.\n", encoding="utf-8"
    )
    hub.skills().add_directory("io.example.gone", tmp_path)
    assistant = hub.bind(Assistant)
    turn = assistant.begin_turn()
    [meta] = [p for p in turn.tools if p.name == "request_skill"]
    assert "io.example.gone/vanishing" in json.dumps(meta.input_schema)
    (folder / "SKILL.md").unlink()
    result = await assistant.call("request_skill", {"skills": ["io.example.gone/vanishing"]})
    assert result.status == 200, result.text
    outcome = json.loads(result.text)
    assert [r["name"] for r in outcome["refused"]] == ["io.example.gone/vanishing"]
    assert str(tmp_path) not in result.text
    assert decisions(hub) == [("skill", "io.example.gone/vanishing", "refused")]
    assert assistant.conversation.attached == ()
