"""A TCP port whose connects hang, for tests of a connect cut short (issue 30).

A listener that never accepts and whose accept queue is full: the kernel
drops the SYNs sent to it, so a client's connect stays in SYN_SENT until the
client gives up (the driver's connection timeout). Unlike a proxy that
accepts and then stays silent, this holds the driver inside its TCP connect
(`_connect_secure`), the one place where cancelling it leaked a socket.
Which of this process's sockets are stuck connecting to it is read from the
kernel (psutil), so a test waits for a state, not for a time.

`close` makes the connects still waiting fail (refused at their next SYN
retransmission, a second or a few after they began).
"""

from __future__ import annotations

import contextlib
import socket
import time

import psutil


def syn_sent_to(port: int) -> set[int]:
    """The local ports of this process's TCP sockets still connecting to `port`."""
    return {c.laddr.port for c in psutil.Process().net_connections("tcp")
            if c.status == psutil.CONN_SYN_SENT and c.raddr and c.raddr.port == port}


class StalledPort:
    def __init__(self, port: int = 0, *, fill_within_s: float = 30.0) -> None:
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen(0)
        self.port: int = self._listener.getsockname()[1]
        self._fillers: list[socket.socket] = []
        # Connect to it until one connect hangs: from then on the queue is full.
        started = time.monotonic()
        while not syn_sent_to(self.port):
            if time.monotonic() - started > fill_within_s:
                self.close()
                raise RuntimeError(f"connects to port {self.port} do not hang here")
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", self.port))
            self._fillers.append(filler)
            time.sleep(0.05)
        self._own = {f.getsockname()[1] for f in self._fillers}

    def connecting(self) -> set[int]:
        """The local ports of connects under way to this port, other than its own."""
        return syn_sent_to(self.port) - self._own

    def close(self) -> None:
        self._listener.close()
        for filler in self._fillers:
            filler.close()
