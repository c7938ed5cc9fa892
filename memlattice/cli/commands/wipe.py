"""`memlattice wipe`: erase everything a namespace holds (memlattice.services.wipe).

Memories, typed records and facts, their relationships, revisions, audit
entries, evidence, sessions and configuration all go; other namespaces are not
touched. The command runs with the database's credentials, as an operator, and
the wipe is recorded (a `NamespaceWipe` node, which no wipe removes). It shows
what the namespace holds first; `--dry-run` stops there. On a terminal it asks
for the namespace's name to confirm; elsewhere it needs `--yes`. Over GraphQL,
`wipeNamespace` does the same for admin keys.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `memlattice --help` must not load the driver
    from memlattice.core.settings import Settings
    from memlattice.services.wipe import WipeReport

EPILOG = textwrap.dedent("""\
    examples:
      memlattice wipe --namespace demo --dry-run      # count what would go
      memlattice wipe --namespace demo                # asks you to type "demo"
      memlattice wipe --namespace ci/run-42 --yes     # scripts
    """)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("wipe", help="erase everything a namespace holds (dry run first)",
                            description=__doc__, epilog=EPILOG,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namespace", required=True, help="the namespace to erase")
    parser.add_argument("--dry-run", action="store_true",
                        help="only count what would go; change nothing")
    parser.add_argument("--yes", action="store_true",
                        help="do not ask for confirmation (needed when stdin is not a terminal)")
    parser.add_argument("--actor", default="cli:wipe", help="who the wipe record names")
    parser.set_defaults(func=run)


def describe(report: WipeReport) -> str:
    counts = report.counts
    labels = ", ".join(f"{n} {label}" for label, n in counts.nodes.items()) or "nothing"
    verb = "holds" if report.dry_run else "wiped; it held"
    return (f"{report.namespace} {verb} {counts.memories} memories,"
            f" {sum(counts.nodes.values())} nodes ({labels}),"
            f" {counts.relationships} relationships")


def confirmed(namespace: str, *, yes: bool) -> bool:
    """--yes, or the namespace's name typed on a terminal."""
    if yes:
        return True
    if not sys.stdin.isatty():
        print("memlattice wipe: not a terminal; pass --yes to wipe without asking",
              file=sys.stderr)
        return False
    return input(f"type {namespace!r} to wipe it for good: ").strip() == namespace


def run(args: argparse.Namespace, settings: Settings) -> None:
    asyncio.run(_run(args, settings))


async def _run(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.core.auth import Principal
    from memlattice.server.runtime import open_runtime
    from memlattice.services.wipe import wipe_namespace

    async with open_runtime(settings, background=False, embed=False) as runtime:
        service = runtime.service
        operator = Principal.development()
        preview = await wipe_namespace(service, principal=operator, namespace=args.namespace,
                                       dry_run=True, actor=args.actor)
        print(describe(preview))
        if args.dry_run or not preview.counts.nodes:
            return
        if not confirmed(preview.namespace, yes=args.yes):
            print("nothing wiped")
            sys.exit(1)
        report = await wipe_namespace(service, principal=operator, namespace=args.namespace,
                                      dry_run=False, actor=args.actor)
        print(describe(report) + f" (wipe {report.wipe_id})")
