"""``toolpalette serve --http`` with authorization: ``--auth-*`` and the ``[serve]`` table.

A real process on 127.0.0.1, configured by a ``toolpalette.toml`` in its working
directory (the key file relative to it) and the command line, serves two principals
the palettes their scopes choose; a wrong setting is one line and exit status 2.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from auth_fixture import AUDIENCE, ISSUER, Issuer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_serve_http_workers import ENV, serving

CODE = "import sys; from toolpalette._cli import main; sys.exit(main())"

CONFIG = """\
[serve]
auth_audience = "{audience}"
auth_public_key_file = "issuer.pem"
auth_required_scopes = ["mcp"]

[serve.palettes]
clerk = "palette_fixture:Clerk"
janitor = {{ thinker = "palette_fixture:Janitor" }}
"""


async def listed(url: str, token: str) -> list[str]:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return [t.name for t in (await client.list_tools()).tools]


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_serve_authorizes_and_serves_each_scope_its_palette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
):
    issuer = Issuer()
    issuer.pem(tmp_path / "issuer.pem")
    (tmp_path / "toolpalette.toml").write_text(CONFIG.format(audience=AUDIENCE))
    monkeypatch.chdir(tmp_path)
    alice, bob = issuer.token("alice", "mcp clerk"), issuer.token("bob", "mcp janitor")
    carol = issuer.token("carol", "mcp")
    args = ["--thinker", "palette_fixture:Reader", "--auth-issuer", ISSUER, "--workers", workers]
    with serving(*args) as served:
        refused = httpx2.post(served.url, json={}, timeout=30)
        seen = [await listed(served.url, token) for token in (alice, bob, carol)]
    assert refused.status_code == 401
    assert "resource_metadata=" in refused.headers["www-authenticate"]
    assert seen[0] == ["echo", "add", "request_tools", "call_tool"]
    assert seen[1] == ["delete_row", "append_note", "request_tools", "call_tool"]
    assert "guarded" in seen[2]  # no palette scope: the command's own thinker
    for token in (alice, bob, carol):
        assert all(token not in line for line in served.lines)


def run_serve(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CODE, "serve", *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("config", "args", "expected"),
    [
        ("", ["--auth-issuer", ISSUER], "authorization needs auth_audience"),
        (
            f'[serve]\nauth_issuer = "{ISSUER}"\nauth_audience = "{AUDIENCE}"\n',
            [],
            "authorization needs one of auth_jwks_url and auth_public_key_file",
        ),
        ('[serve.palettes]\nclerk = "palette_fixture:Clerk"\n', [], "palettes need authorization"),
        (
            f'[serve]\nauth_issuer = "{ISSUER}"\nauth_audience = "aud"\n'
            'auth_public_key_file = "issuer.pem"\n',
            [],
            "give resource_url",
        ),
        (
            f'[serve]\nauth_issuer = "{ISSUER}"\nauth_audience = "{AUDIENCE}"\n'
            'auth_public_key_file = "missing.pem"\n',
            [],
            "authorization cannot be used",
        ),
    ],
    ids=["no audience", "no key", "palettes alone", "audience not a URL", "no key file"],
)
def test_a_setting_that_cannot_be_used_is_one_line_before_serving(
    tmp_path: Path, config: str, args: list[str], expected: str
):
    Issuer().pem(tmp_path / "issuer.pem")
    (tmp_path / "toolpalette.toml").write_text(config)
    done = run_serve(tmp_path, "--thinker", "palette_fixture:Clerk", "--http", *args)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert expected in errors[0]


def test_authorization_options_without_http_are_refused(tmp_path: Path):
    done = run_serve(tmp_path, "--thinker", "palette_fixture:Clerk", "--auth-issuer", ISSUER)
    assert done.returncode == 2
    assert "authorization serves HTTP only: add --http" in done.stderr


def test_an_unknown_key_of_serve_is_a_config_problem(tmp_path: Path):
    (tmp_path / "toolpalette.toml").write_text('[serve]\nauth_isuer = "x"\n')
    done = subprocess.run(
        [sys.executable, "-c", CODE, "check"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "'auth_isuer' of [serve] is not a toolpalette setting" in done.stdout + done.stderr
    assert "did you mean 'auth_issuer'?" in done.stdout + done.stderr


@pytest.mark.parametrize("where", ["flag", "config"])
async def test_at_info_serve_logs_each_request_and_why_each_token_was_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
):
    import time

    from toolpalette.testing import wait_until

    issuer, stranger = Issuer(), Issuer()
    issuer.pem(tmp_path / "issuer.pem")
    config = CONFIG.format(audience=AUDIENCE)
    if where == "config":
        config = config.replace("[serve]\n", '[serve]\nlog_level = "info"\n', 1)
    (tmp_path / "toolpalette.toml").write_text(config)
    monkeypatch.chdir(tmp_path)
    now = int(time.time())
    tokens = {
        "expired": issuer.token("alice", "mcp", exp=now - 3600, iat=now - 7200),
        "wrong audience": issuer.token("alice", "mcp", aud="https://elsewhere.example"),
        "bad signature": stranger.token("alice", "mcp"),
    }
    args = ["--thinker", "palette_fixture:Reader", "--auth-issuer", ISSUER]
    if where == "flag":
        args += ["--log-level", "info"]
    with serving(*args) as served:
        answers = {
            kind: httpx2.post(
                served.url, json={}, headers={"Authorization": f"Bearer {token}"}, timeout=30
            )
            for kind, token in tokens.items()
        }
        # The access and auth lines may come through two streams: wait for both kinds.
        wait_until(
            lambda: (
                sum(" 401 " in line for line in served.lines) >= 3
                and all(f"refused: {kind}" in "\n".join(served.lines) for kind in tokens)
            ),
            timeout=30,
            message="the access lines and the refusals",
        )
        lines = list(served.lines)
    for kind, answer in answers.items():
        assert answer.status_code == 401
        challenge = answer.headers["www-authenticate"]
        assert 'error="invalid_token"' in challenge
        assert f'error_description="The token is refused: {kind}."' in challenge
        assert answer.json()["error_description"] == f"The token is refused: {kind}."
    logged = "\n".join(lines)
    for kind in tokens:
        assert f"bearer token refused: {kind}" in logged
    assert "POST /mcp 401" in logged
    for token in tokens.values():
        assert token.split(".")[1] not in logged  # no token, no claims
        assert all(token.split(".")[1] not in a.text for a in answers.values())
