"""The fault tests' proxy (tests._proxy) leaves nothing open once it is stopped.

A proxy that leaks looks like the service leaking: its sockets turn up as
ResourceWarnings in whichever later test collects them, and a relay that
outlives its proxy keeps a connection to Neo4j open. These stop a proxy with
connections in every state (accepted a moment ago, relaying, held by latency,
cut, refused, stalled) and ask the kernel (psutil) which sockets this process
still holds: none may be on the stopped proxy's port, nor going from it to its
upstream. That upstream is a second proxy in front of the suite's Neo4j, so that
the first one's upstream sockets are told apart from every other connection the
process has to Neo4j.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import psutil

from memlattice.core.settings import Settings
from tests._proxy import neo4j_proxy

# Bolt's preamble and four version proposals (5.8 down to 5.0, then 4.4): Neo4j answers
# with the 4 bytes of the version it agrees to.
HANDSHAKE = bytes.fromhex("6060b017" "00080805" "00000404" "00000000" "00000000")
# How long a state here may take to come on a loaded machine.
CAP_S = 120.0


def held(proxy_port: int, upstream_port: int) -> list[str]:
    """This process's sockets accepted on `proxy_port` or connected to `upstream_port`."""
    return [f"{c.laddr} -> {c.raddr} {c.status}"
            for c in psutil.Process().net_connections("tcp")
            if (c.laddr and c.laddr.port == proxy_port)
            or (c.raddr and c.raddr.port == upstream_port)]


@contextlib.asynccontextmanager
async def clients() -> AsyncIterator[list[socket.socket]]:
    """The test's own client sockets, closed afterwards."""
    opened: list[socket.socket] = []
    try:
        yield opened
    finally:
        for sock in opened:
            sock.close()


def connect(opened: list[socket.socket], port: int) -> socket.socket:
    """A client connecting without waiting: on loopback the kernel completes the
    connect at once, and the proxy accepts it at its next turn of the loop."""
    sock = socket.socket()
    sock.setblocking(False)
    sock.connect_ex(("127.0.0.1", port))
    opened.append(sock)
    return sock


async def handshake(opened: list[socket.socket], port: int) -> bytes:
    """Neo4j's answer to a Bolt handshake sent through the proxy on `port`."""
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setblocking(False)
    opened.append(sock)
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(sock, HANDSHAKE)
    answer = b""
    while len(answer) < 4:
        chunk = await asyncio.wait_for(loop.sock_recv(sock, 4 - len(answer)), CAP_S)
        assert chunk, "the proxy closed a connection it should relay"
        answer += chunk
    return answer


async def answered(opened: list[socket.socket], port: int) -> bytes:
    """What a connection to `port` reads before its end (nothing: it was refused)."""
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setblocking(False)
    opened.append(sock)
    try:
        await loop.sock_connect(sock, ("127.0.0.1", port))
        return await asyncio.wait_for(loop.sock_recv(sock, 1), CAP_S)
    except ConnectionResetError:
        return b""


async def test_a_proxy_stopped_while_it_accepts_leaves_no_socket_open(
        settings: Settings) -> None:
    async with neo4j_proxy(settings.neo4j.uri or "") as neo4j_side:
        # A connection may be at any step of being accepted when `close` runs: in the
        # kernel's queue, accepted, handed to a relay not yet started, relayed. Each
        # number of loop turns between the connects and `close` stops it at another.
        for turns in range(12):
            async with neo4j_proxy(neo4j_side.uri) as proxy, clients() as opened:
                for _ in range(3):
                    connect(opened, proxy.port)
                for _ in range(turns):
                    await asyncio.sleep(0)
                await proxy.close()
                assert not held(proxy.port, neo4j_side.port), turns


async def test_a_proxy_stopped_with_relays_in_every_state_leaves_no_socket_open(
        settings: Settings) -> None:
    async with (neo4j_proxy(settings.neo4j.uri or "") as neo4j_side,
                neo4j_proxy(neo4j_side.uri) as proxy, clients() as opened):
        # Relayed: Neo4j agrees to a version through both proxies.
        for _ in range(2):
            assert (await handshake(opened, proxy.port)) != bytes(4)
        # Cut: dropped, and a connect refused (accepted, then reset) while it is down.
        proxy.cut(down_s=600)
        assert not await answered(opened, proxy.port)
        proxy.cut()
        # Held: Neo4j's answer waits in the proxy for an hour.
        proxy.latency_s = 3600.0
        sent = proxy.upstream_bytes
        await asyncio.get_running_loop().sock_sendall(connect(opened, proxy.port), HANDSHAKE)
        for _ in range(int(CAP_S / 0.01)):
            if proxy.upstream_bytes > sent:
                break
            await asyncio.sleep(0.01)
        assert proxy.upstream_bytes > sent
        # Stalled: the port stops accepting; the relays it had are dropped.
        proxy.stall()
        connect(opened, proxy.port)
        await proxy.close()
        assert not held(proxy.port, neo4j_side.port)
    assert not held(neo4j_side.port, 0)
