"""`memlattice export` / `memlattice import`: a namespace as JSONL, out and back in.

Export streams page by page to a file or stdout. Import validates the whole
file before it writes anything, then writes batches of 500 (MERGE by id,
so importing again is harmless). Besides memlattice exports it reads harn
event logs (`.harn/memory/<namespace>/events.jsonl`, or a whole `.harn`
directory) and JSONL memory entries (`{id, content, tags, source,
created_ms, expires_ms}`). Progress bars go to stderr when it is a
terminal, plain lines otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from memlattice.core.errors import ValidationError

if TYPE_CHECKING:  # imported where used: `memlattice --help` must not pay for them
    from rich.console import Console

    from memlattice.cli.progress import BarProgress
    from memlattice.core.settings import Settings

EPILOG = textwrap.dedent("""\
    examples:
      memlattice export --namespace team/alice --output alice.jsonl
      memlattice import alice.jsonl --namespace team/alice-copy --remap-ids
      memlattice import ~/project/.harn --format harn            # every namespace in the log
      memlattice import notes.jsonl --format entries --namespace notes --dry-run
    """)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export", help="write a namespace as JSONL (memories, relationships, audit)",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    export.add_argument("--namespace", required=True)
    export.add_argument("--output", default="-", help="file to write, or - for stdout")
    export.set_defaults(func=run_export)

    imp = sub.add_parser(
        "import", help="import a memlattice export, a harn event log, or JSONL entries",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    imp.add_argument("file", type=Path, help="the JSONL file (or a .harn directory)")
    imp.add_argument("--namespace", help="destination (default: the one the file names)")
    imp.add_argument("--format", choices=["memlattice", "harn", "entries"], default="memlattice")
    imp.add_argument("--dry-run", action="store_true", help="validate everything, write nothing")
    imp.add_argument("--remap-ids", action="store_true",
                     help="memlattice format: give every record a new id derived from the"
                     " destination namespace (to copy a namespace that still exists)")
    imp.add_argument("--actor", default="cli:import", help="actor recorded in the audit trail")
    imp.set_defaults(func=run_import)




def _console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def run_export(args: argparse.Namespace, settings: Settings) -> None:
    asyncio.run(_export(args, settings))


async def _export(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.cli.progress import BarProgress
    from memlattice.core.model import validate_namespace
    from memlattice.graph.transfer import TransferGraph
    from memlattice.portability.exporter import export_namespace
    from memlattice.server.runtime import open_runtime

    try:
        namespace = validate_namespace(args.namespace)
    except ValueError as exc:
        raise ValidationError(str(exc), field="namespace") from None
    console = _console()
    async with open_runtime(settings, background=False, embed=False) as rt:
        with _sink(args.output) as sink, BarProgress(console).running() as progress:
            counts = await export_namespace(TransferGraph(rt.client), namespace, sink,
                                            progress=progress)
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) or "nothing"
    console.print(f"exported {namespace}: {summary}", highlight=False)


@contextlib.contextmanager
def _sink(output: str) -> Iterator[TextIO]:
    if output == "-":
        yield sys.stdout
        return
    with open(output, "w", encoding="utf-8") as sink:
        yield sink


def run_import(args: argparse.Namespace, settings: Settings) -> None:
    asyncio.run(_import(args, settings))


async def _import(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.cli.progress import BarProgress
    from memlattice.graph.transfer import TransferGraph
    from memlattice.portability.importer import import_export
    from memlattice.server.runtime import open_runtime

    path: Path = args.file
    if not path.exists():
        raise ValidationError(f"{path} does not exist")
    if args.format != "harn" and not path.is_file():
        raise ValidationError(f"{path} is not a file")
    console = _console()
    verb = "would import" if args.dry_run else "imported"
    async with open_runtime(settings, background=False) as rt:
        graph = TransferGraph(rt.client, settings.vector_index)
        with BarProgress(console).running() as progress:
            if args.format == "memlattice":
                report = await import_export(
                    graph, path, embedder=rt.service.embedder, dimension=rt.service.dimension,
                    namespace=args.namespace, remap_ids=args.remap_ids, dry_run=args.dry_run,
                    progress=progress)
                lines = [f"{verb} into {report.namespace}: " + ", ".join(
                    f"{n} {kind}" for kind, n in report.counts.items())
                    + (f" ({report.reembedded} re-embedded)" if report.reembedded else "")]
            else:
                lines = await _import_log(graph, rt.service, path, args, progress, verb)
    for line in lines:
        console.print(line, highlight=False)


async def _import_log(graph: Any, service: Any, path: Path, args: argparse.Namespace,
                      progress: BarProgress, verb: str) -> list[str]:
    from memlattice.portability import foreign

    if args.format == "harn":
        logs = foreign.harn_logs(path, args.namespace)
    else:
        if not args.namespace:
            raise ValidationError("entries carry no namespace: pass --namespace",
                                  field="namespace")
        logs = [(path, foreign.validate(args.namespace))]
    lines = []
    for log, namespace in logs:
        report = foreign.LogReport(namespace=namespace)

        def ops(r: foreign.LogReport, log: Path = log, namespace: str = namespace,
                ) -> Iterator[foreign.LogOp]:
            if args.format == "harn":
                return foreign.harn_ops(log, namespace, remap_namespace=bool(args.namespace),
                                        report=r)
            return foreign.entry_ops(log, namespace, report=r)

        await foreign.apply_ops(graph, service, ops, report, actor=args.actor,
                                dry_run=args.dry_run, progress=progress)
        line = (f"{verb} {log} into {namespace}: {report.records} records,"
                f" {report.tombstones} tombstones")
        if not args.dry_run:
            line += f" ({report.written} written or changed, {report.forgotten} forgotten)"
        if report.expired:
            line += f", {report.expired} already expired"
        if report.skipped:
            line += ", skipped " + ", ".join(f"{n} {t}" for t, n in report.skipped.items())
        lines.append(line)
    return lines
