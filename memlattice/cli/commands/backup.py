"""`memlattice backup` and `memlattice restore`: the whole server, online, and back.

`backup FILE` reads every node and relationship of the database (memories
with their vectors in every space, revisions, relationships, audit trail,
event log, API keys, namespace configurations, sessions, entities, migration
state: whatever it holds) in one read transaction while the service keeps
serving, into a gzipped JSONL file (memlattice.portability.backup).
`restore FILE` loads such a file into a fresh database (one that
`memlattice migrate` or `./dev up` prepared, or an empty one), recreates the
backed-up indexes, then applies this release's migrations, so a backup of an
earlier release comes back upgraded. A database holding any data, or one a
service still serves (stop it first), is refused, and so is a file that does
not hold what its last line counts or whose memories have another embedding
size than this server's, or were embedded by another model
(EMBEDDING_MODEL_MISMATCH: restore with the backed-up server's
MEMLATTICE_EMBEDDING_* settings, or pass --allow-other-model and re-embed);
nothing is written then.
What a backup taken during writes holds: docs/operating.md, "Backup and restore".
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memlattice.cli.commands import INTERRUPTED

if TYPE_CHECKING:  # imported where used: `memlattice --help` must not load the driver
    from memlattice.core.settings import Settings

BACKUP_EPILOG = textwrap.dedent("""\
    examples:
      memlattice backup memlattice-$(date +%F).backup.gz
      NEO4J_URI=bolt://db:7687 NEO4J_PASSWORD=... memlattice backup /backups/nightly.gz
    """)
RESTORE_EPILOG = textwrap.dedent("""\
    examples:
      memlattice restore memlattice-2026-11-26.backup.gz       # into the local Neo4j
      NEO4J_URI=bolt://new:7687 NEO4J_PASSWORD=... memlattice restore nightly.gz
    """)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    backup = sub.add_parser("backup", help="the whole server into one file, while it serves",
                            description=__doc__, epilog=BACKUP_EPILOG, formatter_class=raw)
    backup.add_argument("output", type=Path, help="the file to write (gzipped JSONL)")
    backup.set_defaults(func=run_backup)
    restore = sub.add_parser("restore", help="a backup into a fresh database, then migrate",
                             description=__doc__, epilog=RESTORE_EPILOG, formatter_class=raw)
    restore.add_argument("input", type=Path, help="a file `memlattice backup` wrote")
    restore.add_argument("--batch", type=_at_least_one, default=1000,
                         help="nodes or relationships per transaction (default: 1000)")
    restore.add_argument("--ignore-leases", action="store_true",
                         help="restore although the database holds live leases, when no"
                              " service serves it any more (one was killed outright)")
    restore.add_argument("--allow-other-model", action="store_true",
                         help="restore memories embedded by another model than this"
                              " server's (same size): searches compare them with this"
                              " model's queries until you re-embed (docs/operating.md)")
    restore.set_defaults(func=run_restore)


def _at_least_one(text: str) -> int:
    """An argparse type: a whole number of 1 or more (a batch of none writes nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: it must be 1 or more")
    return value


def run_backup(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.portability.backup import back_up
    from memlattice.server.graph_opening import open_graph

    async def run() -> None:
        started = time.perf_counter()
        async with open_graph(settings, migrate_schema=False) as graph:
            report = await back_up(graph.client, args.output)
        models = ", ".join(f"{n} by {name}" for name, n in sorted(report.models.items()))
        print(f"backed up {report.nodes} nodes and {report.relationships} relationships"
              f" to {report.path} in {time.perf_counter() - started:.1f}s"
              + (f"; memories embedded: {models}" if models else ""))

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        # back_up removed its `.partial` file; an earlier file of that name is untouched.
        print(f"memlattice backup: interrupted; no backup written to {args.output}",
              file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None


def run_restore(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.embeddings.base import configured_identity
    from memlattice.portability.restore import restore_store
    from memlattice.server.graph_opening import open_graph

    model = configured_identity(settings.embedding)

    async def run() -> None:
        started = time.perf_counter()
        async with open_graph(settings, migrate_schema=False) as graph:
            report, applied = await restore_store(
                graph.client, args.input, dimension=settings.embedding.dimension,
                index=settings.vector_index, batch=args.batch,
                ignore_leases=args.ignore_leases, model=model,
                other_model_ok=args.allow_other_model)
        skipped = (f"; {report.skipped_relationships} relationships skipped (an endpoint was"
                   " deleted while the backup read)" if report.skipped_relationships else "")
        print(f"restored {report.nodes} nodes and {report.relationships} relationships"
              f" from {args.input} in {time.perf_counter() - started:.1f}s"
              f"; migrations applied: {applied or 'none'}{skipped}")
        if report.other_models:
            others = ", ".join(f"{n} by {name}" for name, n in report.other_models.items())
            print(f"warning: restored memories embedded by another model than this server's"
                  f" {model} ({others}): searches compare their vectors with this model's"
                  " queries, and find noise, until each namespace is re-embedded"
                  " (`memlattice reembed --namespace NS --model M`, docs/operating.md)",
                  file=sys.stderr)
        if report.unnamed_models:
            print(f"note: {report.unnamed_models} memories' vectors name no embedding model"
                  " (an early release wrote them), so their model was not checked: restore"
                  " with the embedding settings of the server that was backed up",
                  file=sys.stderr)

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        print("memlattice restore: interrupted; a restore cut short after its first pass"
              f" (the check) leaves part of {args.input} in the database, which a second"
              " restore refuses: start again on a fresh one", file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None
