"""Progress for long CLI commands (export, import): bars on a terminal, lines elsewhere.

Its own module so that the commands import rich only when they run, never for
`memlattice --help`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)


class BarProgress:
    """rich progress bars on a terminal; one plain line per finished task elsewhere."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self.bars = Progress(TextColumn("{task.description:<24}"), BarColumn(),
                             MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                             disable=not self.live)
        self.tasks: dict[str, TaskID] = {}
        self.done: dict[str, int] = {}

    def start(self, task: str, total: int | None) -> None:
        self._report_previous()
        self.tasks[task] = self.bars.add_task(task, total=total)
        self.done[task] = 0

    def advance(self, task: str, amount: int) -> None:
        self.bars.advance(self.tasks[task], amount)
        self.done[task] += amount

    def _report_previous(self) -> None:
        if not self.live and self.done:
            task, count = list(self.done.items())[-1]
            self.console.print(f"{task}: {count}", highlight=False)

    @contextlib.contextmanager
    def running(self) -> Iterator[BarProgress]:
        with self.bars:
            yield self
        self._report_previous()
