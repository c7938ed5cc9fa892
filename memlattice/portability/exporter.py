"""Stream one namespace out as JSONL: a header line, then every kind's records.

Nothing is held beyond one page (500 records): memories oldest first, then
relationships, then audit entries, each written as soon as its page arrives.
The header's counts are taken first; writes that land during the export may
make the body differ from them (export a quiet namespace for a snapshot).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

from memlattice.core.model import utcnow
from memlattice.graph.transfer import TransferGraph
from memlattice.portability.kinds import KINDS, Kind

FORMAT = "memlattice-export"
VERSION = 1


class Progress(Protocol):
    """Where progress goes (a progress bar, a log line, nothing)."""

    def start(self, task: str, total: int | None) -> None: ...

    def advance(self, task: str, amount: int) -> None: ...


class NoProgress:
    def start(self, task: str, total: int | None) -> None:
        pass

    def advance(self, task: str, amount: int) -> None:
        pass


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


async def export_namespace(
    graph: TransferGraph, namespace: str, sink: TextIO, *,
    progress: Progress | None = None, kinds: Sequence[Kind] = KINDS,
) -> dict[str, int]:
    """Write the export to `sink`; returns how many records of each kind were written."""
    progress = progress or NoProgress()
    counts = {kind.name: await kind.count(graph, namespace) for kind in kinds}
    sink.write(dumps({"_type": "header", "format": FORMAT, "version": VERSION,
                      "namespace": namespace, "exportedAt": utcnow().isoformat(),
                      "counts": counts}) + "\n")
    written: dict[str, int] = {}
    for kind in kinds:
        progress.start(kind.name, counts[kind.name])
        written[kind.name] = 0
        async for page in kind.export(graph, namespace):
            sink.write("".join(dumps(record) + "\n" for record in page))
            written[kind.name] += len(page)
            progress.advance(kind.name, len(page))
    sink.flush()
    return written
