"""An issuer's key set cannot stall authentication: slow, trickled, huge, or hammered.

The key set is served by a real HTTP server on 127.0.0.1 that can hold its answer,
send it a byte at a time, or send 64 MiB; the palette runs under uvicorn with
``JWTAuth(jwks_url=...)`` and every request is a real HTTP request.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import palette_fixture as fx
import toolpalette.mcp
from auth_fixture import AUDIENCE, ISSUER, Issuer
from mcp_server_fixture import post, serving
from toolpalette import ToolHub
from toolpalette.mcp import JWTAuth
from toolpalette.testing import await_until

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HUGE = 64 << 20


class KeyServer:
    """A JWKS endpoint whose answer the test shapes: ``fast``, ``hold``, ``trickle``, ``huge``."""

    def __init__(self, *issuers: Issuer) -> None:
        self.body = json.dumps({"keys": [i.jwk() for i in issuers]}).encode()
        self.mode = "fast"
        self.fetches = 0
        self.release = threading.Event()
        self.trickled = threading.Event()
        """Set once a trickled answer was sent whole."""
        self.sent = 0
        self.stop = threading.Event()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        self.fetches += 1
        if self.mode == "hold":
            self.release.wait(60)
        size = HUGE if self.mode == "huge" else len(self.body)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(size))
        handler.end_headers()
        try:
            if self.mode == "trickle":
                for i in range(len(self.body)):
                    if self.stop.is_set():
                        return
                    handler.wfile.write(self.body[i : i + 1])
                    handler.wfile.flush()
                    time.sleep(0.02)
                self.trickled.set()
            elif self.mode == "huge":
                chunk = b" " * 65536
                while self.sent < HUGE:
                    handler.wfile.write(chunk)
                    self.sent += len(chunk)
            else:
                handler.wfile.write(self.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the reader gave up: what is measured


@contextmanager
def key_server(keys: KeyServer) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            keys.answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = False  # server_close joins the handlers
    server.block_on_close = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        keys.release.set()
        keys.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def app(url: str, **options: Any) -> Any:
    auth = JWTAuth(ISSUER, AUDIENCE, jwks_url=url, **options)
    return toolpalette.mcp.asgi_app(ToolHub(), fx.Clerk, auth=auth, stateless=True)


async def fetches_end() -> None:
    """Wait for every key-set fetch thread to end (they end at their deadline)."""
    await await_until(
        lambda: not any(t.name == "toolpalette-jwks-fetch" for t in threading.enumerate()),
        timeout=30,
    )


async def test_valid_tokens_answer_while_junk_tokens_force_refetches_from_a_slow_issuer() -> None:
    issuer, stranger = Issuer(kid="k1"), Issuer(kid="junk")
    keys = KeyServer(issuer)
    with key_server(keys) as url:
        async with serving(app(url)) as base:
            first = await asyncio.to_thread(post, base, issuer.token("alice"), LIST)
            assert first.status_code == 200
            keys.mode = "hold"  # the issuer stops answering
            junk = [
                asyncio.ensure_future(
                    asyncio.to_thread(post, base, stranger.token(f"junk{i}"), LIST)
                )
                for i in range(10)
            ]
            await await_until(lambda: keys.fetches == 2, timeout=10)
            valid = [
                await asyncio.to_thread(post, base, issuer.token(f"user{i}"), LIST)
                for i in range(5)
            ]
            held = not keys.release.is_set()
            keys.release.set()
            refused = await asyncio.gather(*junk)
            await fetches_end()
    assert held  # the valid tokens were answered while the refetch still waited
    assert [v.status_code for v in valid] == [200] * 5
    assert [r.status_code for r in refused] == [401] * 10
    assert keys.fetches == 2  # ten unknown key ids, one refetch: rate limited


async def test_a_key_set_sent_a_byte_at_a_time_is_given_up_at_the_deadline() -> None:
    issuer = Issuer()
    keys = KeyServer(issuer)
    keys.mode = "trickle"  # about 8 seconds a kilobyte
    with key_server(keys) as url:
        async with serving(app(url, jwks_timeout=1.0)) as base:
            answer = await asyncio.to_thread(post, base, issuer.token("alice"), LIST)
            given_up_early = not keys.trickled.is_set()
            await fetches_end()
    assert answer.status_code == 401
    assert given_up_early


async def test_a_huge_key_set_is_refused_unread_past_the_cap() -> None:
    issuer = Issuer()
    keys = KeyServer(issuer)
    keys.mode = "huge"
    with key_server(keys) as url:
        async with serving(app(url)) as base:
            answer = await asyncio.to_thread(post, base, issuer.token("alice"), LIST)
            await fetches_end()
            await await_until(lambda: keys.sent > 0, timeout=10)
    assert answer.status_code == 401
    assert keys.sent < 16 << 20  # the 1 MiB cap, and what the socket buffers took
