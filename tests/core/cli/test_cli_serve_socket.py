"""The socket ``toolpalette serve --http`` listens on, for one worker or many.

Every connection accepted on it must send without Nagle's delay (``TCP_NODELAY``):
otherwise each keep-alive response after the first waits for the client's delayed
acknowledgement. Checked on a connection accepted by an asyncio server, as uvicorn's
workers accept them.
"""

from __future__ import annotations

import asyncio
import socket

from toolpalette._cli import serve


class _Accepted(asyncio.Protocol):
    def __init__(self, accepted: asyncio.Future[asyncio.BaseTransport]) -> None:
        self.accepted = accepted

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.accepted.set_result(transport)


async def test_connections_accepted_on_the_serving_socket_send_without_delay():
    listener = serve._listen("127.0.0.1", 0)
    accepted: asyncio.Future[asyncio.BaseTransport] = asyncio.get_running_loop().create_future()
    server = await asyncio.get_running_loop().create_server(
        lambda: _Accepted(accepted), sock=listener
    )
    async with server:
        _, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
        transport = await asyncio.wait_for(accepted, timeout=10)
        connection = transport.get_extra_info("socket")
        assert connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        transport.close()
        writer.close()
        await writer.wait_closed()
