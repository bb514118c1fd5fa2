"""The MCP Skills extension served: ``skills/list``, ``skills/get``, directory reads.

In-process on both protocol eras with the SDK's client in its default mode (and the
2025 handshake), then ``toolpalette serve`` over stdio and over HTTP with two workers.
Every digest is checked against the file's own bytes, every front matter against the
file's own text (read here, not through the server).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import toolpalette.mcp
import yaml
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter
from toolpalette import ToolHub

from .test_stdio_and_http import ENV, accepting, free_port, group_gone, serve_command, stdio

EXTENSION = "io.modelcontextprotocol/skills"
BUNDLE = "io.example.served"
ERAS = ["legacy", "auto"]
ANY = TypeAdapter(dict[str, Any])

SKILLS = {
    "fill-forms": {
        "SKILL.md": "---\nname: fill-forms\ndescription: Fill a form from its template.\n"
        "license: Apache-2.0\nmetadata:\n  version: '2.1'\n  audience: agents\n---\n\n"
        "# Fill forms\n\nPick a template from `templates/`.\n",
        "templates/invoice.md": "# Invoice\n",
        "templates/regional/eu-invoice.md": "# EU invoice\n",
        "scripts/check.py": "print('checked')\n",
    },
    "plan-trips": {
        "SKILL.md": "---\nname: plan-trips\ndescription: Plan a trip step by step.\n---\n\n"
        "Plan it.\n",
    },
}


class UriParams(types.RequestParams):
    uri: str


class CursorParams(types.RequestParams):
    uri: str | None = None
    cursor: str | None = None


def write_skills(root: Path, skills: dict[str, dict[str, str]]) -> None:
    for name, files in skills.items():
        for relpath, text in files.items():
            path = root / name / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skills(root, SKILLS)
    return root


def hub_of(root: Path) -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    hub.skills().add_directory(BUNDLE, str(root))
    return hub


@asynccontextmanager
async def connected(root: Path, mode: str, **options: Any) -> AsyncIterator[Client]:
    hub = hub_of(root)
    try:
        async with Client(toolpalette.mcp.server(hub, **options), mode=mode) as client:
            yield client
    finally:
        hub.close()


async def request(client: Client, method: str, params: types.RequestParams) -> dict[str, Any]:
    return await client.session.send_request(types.Request(method=method, params=params), ANY)


async def every_entry(client: Client) -> tuple[list[dict[str, Any]], int]:
    entries: list[dict[str, Any]] = []
    cursor = None
    pages = 0
    while True:
        page = await request(client, "skills/list", CursorParams(cursor=cursor))
        pages += 1
        entries.extend(page["skills"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries, pages


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def file_front_matter(text: str) -> Any:
    return yaml.safe_load(text.split("---\n")[1])


def expected_entry(root: Path, name: str) -> dict[str, Any]:
    """The entry of skill ``name`` as the files on disk say it must be."""
    folder = root / name
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    resources = [
        {
            "uri": f"skill://{BUNDLE}/{name}/{p.relative_to(folder).as_posix()}",
            "digest": sha256(p.read_bytes()),
            "size": len(p.read_bytes()),
        }
        for p in files
    ]
    return {
        "uri": f"skill://{BUNDLE}/{name}/SKILL.md",
        "frontmatter": file_front_matter((folder / "SKILL.md").read_text()),
        "resources": sorted(resources, key=lambda r: r["uri"]),
    }


def normalized(entry: dict[str, Any]) -> dict[str, Any]:
    return {**entry, "resources": sorted(entry["resources"], key=lambda r: r["uri"])}


@pytest.mark.parametrize("mode", ERAS)
async def test_the_capability_is_declared_inline_with_directory_reads(skills_root: Path, mode: str):
    async with connected(skills_root, mode) as client:
        capabilities = client.server_capabilities
        assert capabilities.resources is not None
        if mode == "auto":
            assert client.protocol_version == "2026-07-28"
            assert capabilities.extensions[EXTENSION] == {"directoryRead": True}
        else:  # the 2025 handshake has no extensions field: experimental carries it
            assert capabilities.experimental[EXTENSION] == {"directoryRead": True}


@pytest.mark.parametrize("mode", ERAS)
async def test_every_page_of_skills_list_carries_whole_entries_as_the_files_say(
    skills_root: Path, mode: str
):
    async with connected(skills_root, mode, page_size=1) as client:
        entries, pages = await every_entry(client)
        first = await request(client, "skills/list", CursorParams())
    assert pages == 2
    assert [normalized(e) for e in entries] == [
        expected_entry(skills_root, name) for name in sorted(SKILLS)
    ]
    assert entries[0]["frontmatter"]["metadata"] == {"version": "2.1", "audience": "agents"}
    if mode == "auto":
        assert (first["ttlMs"], first["cacheScope"]) == (60_000, "private")
        assert first["resultType"] == "complete"
    else:
        assert "ttlMs" not in first
        assert "cacheScope" not in first


@pytest.mark.parametrize("mode", ERAS)
async def test_skills_get_answers_the_listed_entry_and_32602_for_any_other_uri(
    skills_root: Path, mode: str
):
    async with connected(skills_root, mode) as client:
        entries, _ = await every_entry(client)
        for entry in entries:
            got = await request(client, "skills/get", UriParams(uri=entry["uri"]))
            assert got["skill"] == entry
            assert "nextCursor" not in got
            assert ("ttlMs" in got) is (mode == "auto")
        refused = []
        for uri in (
            f"skill://{BUNDLE}/no-such-skill/SKILL.md",
            f"skill://{BUNDLE}/fill-forms/templates/invoice.md",
            f"skill://{BUNDLE}/fill-forms",
            "https://example.com/fill-forms/SKILL.md",
        ):
            with pytest.raises(MCPError) as caught:
                await request(client, "skills/get", UriParams(uri=uri))
            refused.append((caught.value.code, caught.value.message))
        with pytest.raises(MCPError) as stale:
            await request(client, "skills/list", CursorParams(cursor="tp1.bm90LWEtY3Vyc29y"))
    assert refused == [(types.INVALID_PARAMS, "No skill is served at that URI.")] * 4
    assert stale.value.code == types.INVALID_PARAMS


@pytest.mark.parametrize("mode", ERAS)
async def test_the_skill_md_resource_is_the_file_itself(skills_root: Path, mode: str):
    async with connected(skills_root, mode) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        uri = f"skill://{BUNDLE}/fill-forms/SKILL.md"
        read = await client.read_resource(uri)
    assert listed[uri].name == "fill-forms"
    assert listed[uri].description == "Fill a form from its template."
    assert listed[uri].mime_type == "text/markdown"
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text == SKILLS["fill-forms"]["SKILL.md"]
    assert content.mime_type == "text/markdown"


@pytest.mark.parametrize("mode", ERAS)
async def test_reading_a_file_the_skill_does_not_serve_is_32602_on_2026(
    skills_root: Path, mode: str
):
    async with connected(skills_root, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(f"skill://{BUNDLE}/fill-forms/templates/credit-note.md")
    # The Skills extension (and 2026-07-28's resources) answer -32602; 2025 had -32002.
    assert caught.value.code == (types.INVALID_PARAMS if mode == "auto" else -32002)


@pytest.mark.parametrize("mode", ERAS)
async def test_directories_list_their_direct_children_page_by_page(skills_root: Path, mode: str):
    root = f"skill://{BUNDLE}/fill-forms"

    async def children(uri: str) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        cursor = None
        while True:
            page = await request(
                client, "resources/directory/read", CursorParams(uri=uri, cursor=cursor)
            )
            found.extend((r["uri"], r["mimeType"]) for r in page["resources"])
            cursor = page.get("nextCursor")
            if cursor is None:
                return found

    async with connected(skills_root, mode, page_size=2) as client:
        top = await children(root)
        templates = await children(f"{root}/templates")
        regional = await children(f"{root}/templates/regional")
        refused = []
        for uri in (f"{root}/SKILL.md", f"{root}/nothing-here", f"{root}/"):
            with pytest.raises(MCPError) as caught:
                await request(client, "resources/directory/read", UriParams(uri=uri))
            refused.append(caught.value.code)
    assert top == [
        (f"{root}/SKILL.md", "text/markdown"),
        (f"{root}/scripts", "inode/directory"),
        (f"{root}/templates", "inode/directory"),
    ]
    assert templates == [
        (f"{root}/templates/invoice.md", "text/markdown"),
        (f"{root}/templates/regional", "inode/directory"),
    ]
    assert regional == [(f"{root}/templates/regional/eu-invoice.md", "text/markdown")]
    assert refused == [types.INVALID_PARAMS] * 3


async def test_a_skill_over_the_extensions_file_limit_stays_a_prompt_only(tmp_path: Path):
    root = tmp_path / "skills"
    many = {f"refs/{i:03}.md": "x" for i in range(512)}  # 513 files with SKILL.md
    write_skills(root, {"plan-trips": SKILLS["plan-trips"]})
    write_skills(
        root,
        {
            "too-many": {
                **many,
                "SKILL.md": "---\nname: too-many\ndescription: Has too many files.\n---\nBody\n",
            }
        },
    )
    async with connected(root, "auto") as client:
        entries, _ = await every_entry(client)
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        uri = f"skill://{BUNDLE}/too-many/SKILL.md"
        with pytest.raises(MCPError) as caught:
            await request(client, "skills/get", UriParams(uri=uri))
    assert [e["frontmatter"]["name"] for e in entries] == ["plan-trips"]
    assert f"{BUNDLE}/too-many" in prompts
    assert caught.value.code == types.INVALID_PARAMS


async def test_a_palette_without_skills_declares_no_extension(tmp_path: Path):
    (tmp_path / "skills").mkdir()
    async with connected(tmp_path / "skills", "auto") as client:
        assert EXTENSION not in (client.server_capabilities.extensions or {})
        with pytest.raises(MCPError) as caught:
            await request(client, "skills/list", CursorParams())
    assert caught.value.code == types.METHOD_NOT_FOUND


# -- toolpalette serve: stdio, and HTTP with two workers ------------------------------------

SQL = "toolpalette-skilljar-sql"


def installed_sql_files() -> dict[str, bytes]:
    """The files of the installed SQL skilljar, by skill:// URI, read from disk here."""
    import importlib.resources

    root = importlib.resources.files("toolpalette_skilljar_sql")
    found: dict[str, bytes] = {}
    for folder in root.iterdir():
        if not folder.is_dir() or not folder.joinpath("SKILL.md").is_file():
            continue
        stack = [(folder, "")]
        while stack:
            node, prefix = stack.pop()
            for child in node.iterdir():
                if child.name == "__pycache__":
                    continue
                rel = f"{prefix}{child.name}"
                if child.is_dir():
                    stack.append((child, rel + "/"))
                else:
                    found[f"skill://io.toolpalette.sql/{folder.name}/{rel}"] = child.read_bytes()
    return found


async def check_served_sql(client: Client) -> None:
    files = installed_sql_files()
    entries, _ = await every_entry(client)
    assert entries, "the SQL skilljar's skills are listed"
    listed = {r["uri"]: r for e in entries for r in e["resources"]}
    assert set(listed) == set(files)
    for uri, data in files.items():
        assert (listed[uri]["digest"], listed[uri]["size"]) == (sha256(data), len(data))
    for entry in entries:
        got = await request(client, "skills/get", UriParams(uri=entry["uri"]))
        assert got["skill"] == entry
        read = await client.read_resource(entry["uri"])
        text = read.contents[0].text  # type: ignore[union-attr]
        assert sha256(text.encode()) == listed[entry["uri"]]["digest"]
        assert entry["frontmatter"] == file_front_matter(text)


@pytest.mark.parametrize("mode", ERAS)
async def test_stdio_serves_an_installed_skilljar_through_the_extension(mode: str):
    pytest.importorskip("toolpalette_skilljar_sql", reason="a first-party skilljar")
    async with Client(stdio("--select", SQL), mode=mode) as client:
        await check_served_sql(client)


@pytest.fixture(params=["1", "2"], ids=["one-worker", "two-workers"])
def http_workers(request: pytest.FixtureRequest) -> Any:
    port = free_port()
    workers = request.param
    process = subprocess.Popen(
        serve_command("--select", SQL, "--workers", workers, "--http", "--port", str(port)),
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    from toolpalette.testing import wait_until

    try:
        wait_until(lambda: accepting(port) or process.poll() is not None, timeout=30)
        assert process.poll() is None
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        import signal

        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
        wait_until(lambda: group_gone(process.pid), timeout=15, message="no worker is left")


@pytest.mark.parametrize("mode", ERAS)
async def test_http_serves_the_same_entries_from_one_worker_or_two(http_workers: str, mode: str):
    pytest.importorskip("toolpalette_skilljar_sql", reason="a first-party skilljar")
    for _ in range(3):  # fresh connections: with two workers, either may answer each
        async with Client(http_workers, mode=mode) as client:
            await check_served_sql(client)
