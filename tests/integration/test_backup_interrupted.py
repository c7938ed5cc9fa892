"""Ctrl-C during `memlattice backup` (issue 30, item 3): nothing left behind, a clear line.

The command runs as a real process against a private Neo4j, through a TCP proxy
(tests._proxy) in the test's own event loop. Once the file being written holds
node lines (the scan has begun), the proxy holds back every further reply of
Neo4j, so the backup is caught mid-read however fast or slow this machine is:
no sleep decides when SIGINT is sent, and the backup cannot finish first. The
replies flow again once the backup has dropped its `.partial` file, so that its
transaction closes as it would on a live database. Then: exit status 130 (the
CLI's for Ctrl-C), one line saying no backup was written, no traceback, neither
the file nor its `.partial`; and the next backup of the same store succeeds.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memlattice.cli.commands import INTERRUPTED
from memlattice.core.settings import Settings
from memlattice.portability.backup_check import check
from tests._proxy import neo4j_proxy
from tests.conftest import GraphQLClient
from tests.integration._apps import app_with
from tests.integration._stores import client_for, describe, reset
from tests.integration._support import mem
from tests.integration.test_backup import ROOMY, WRITE_MANY

NS = "backup-interrupted"
# About 3 nodes per memory (its audit entry and more) with 256-dimension vectors:
# several of the scan's fetches of 2000 records, so holding the replies once the
# first records are written always leaves most of the store unread.
MEMORIES = 1500
BATCH = 100
SCANNING_BYTES = 4096  # the gzip file past its header line: node lines are in it
WAIT_S = 300.0  # for each step, on a slow and busy machine


def cli_env(uri: str, settings: Settings) -> dict[str, str]:
    return {**os.environ, "NEO4J_URI": uri, "NEO4J_USER": settings.neo4j.user,
            "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value()}


async def until(condition_met: Callable[[], bool], what: str,
                process: asyncio.subprocess.Process, err: Path) -> None:
    """Poll `condition_met()` until true; fail if the process ended or WAIT_S passed."""
    deadline = time.monotonic() + WAIT_S
    while not condition_met():
        assert process.returncode is None, (
            f"the backup ended ({process.returncode}) before {what}: {err.read_text()[-3000:]}")
        assert time.monotonic() < deadline, f"no {what} after {WAIT_S:.0f}s"
        await asyncio.sleep(0.02)


async def test_ctrl_c_mid_read_leaves_nothing_and_the_next_backup_succeeds(
        second_spare_settings: Settings, tmp_path: Path) -> None:
    settings = second_spare_settings
    client = client_for(settings)
    try:
        await reset(client)
        async with app_with(settings, limits=ROOMY) as http:
            gql = GraphQLClient(http)
            for start in range(0, MEMORIES, BATCH):
                await gql.ok(WRITE_MANY, {"is": [mem(NS, f"harbour log entry {i}")
                                                 for i in range(start, start + BATCH)]})
        held = await describe(client)
        path = tmp_path / "store.backup.gz"
        partial = path.with_name(path.name + ".partial")
        err = tmp_path / "backup.err"

        async with neo4j_proxy(settings.neo4j.uri or "") as proxy:
            with err.open("wb") as stderr:
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "memlattice.cli", "backup", str(path),
                    env=cli_env(proxy.uri, settings), stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL, stderr=stderr)
            try:
                await until(lambda: partial.exists()
                            and partial.stat().st_size > SCANNING_BYTES,
                            "node lines in the .partial file", process, err)
                proxy.hold()  # from here the backup cannot finish
                process.send_signal(signal.SIGINT)
                await until(lambda: not partial.exists(), "removal of the .partial file",
                            process, err)
                proxy.release()
                returncode = await asyncio.wait_for(process.wait(), WAIT_S)
            finally:
                proxy.release()
                if process.returncode is None:
                    process.kill()
                    await process.wait()

        said = err.read_text()
        assert returncode == INTERRUPTED == 130, said[-3000:]
        assert f"memlattice backup: interrupted; no backup written to {path}" in said, said
        assert "Traceback" not in said, said[-3000:]
        assert not path.exists() and not partial.exists()
        assert not list(tmp_path.glob("*.partial"))

        again = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "memlattice.cli", "backup", str(path),
            env=cli_env(settings.neo4j.uri or "", settings), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, errors = await asyncio.wait_for(again.communicate(), WAIT_S)
        assert again.returncode == 0, errors.decode()[-3000:]
        assert out.decode().startswith(f"backed up {sum(held.nodes.values())} nodes"), out
        checked = check(path, dimension=settings.embedding.dimension)
        assert checked.end["labels"]["Memory"] == held.labels["Memory"] == MEMORIES
        assert checked.end["nodes"] == sum(held.nodes.values())
        assert not partial.exists()
    finally:
        await client.close()
