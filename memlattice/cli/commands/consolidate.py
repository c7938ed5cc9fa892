"""`memlattice consolidate`: consolidate one namespace, or every one, now.

The service does the same every MEMLATTICE_CONSOLIDATION_INTERVAL_HOURS (6 by
default); this runs it in the foreground and prints what it did. It is safe
beside a live service: runs of one namespace serialise on its lock, and a
second run finds nothing left to do.
"""

from __future__ import annotations

import argparse
import asyncio
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `memlattice --help` imports no more than argparse needs
    from memlattice.core.settings import Settings

EPILOG = textwrap.dedent("""\
    examples:
      memlattice consolidate --namespace team/alice
      memlattice consolidate --all
    """)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "consolidate", help="turn successful episodes into facts, skills and plans now",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--namespace", help="the namespace to consolidate")
    which.add_argument("--all", action="store_true",
                       help="every namespace that holds episodic records")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> None:
    asyncio.run(_run(args, settings))


async def _run(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.core.auth import Tenant
    from memlattice.core.model import validate_namespace
    from memlattice.server.runtime import open_runtime

    async with open_runtime(settings, background=False) as runtime:
        assert runtime.consolidation is not None
        consolidator = runtime.consolidation.consolidator
        namespaces = (await consolidator.namespaces() if args.all
                      else [validate_namespace(args.namespace)])
        for namespace in namespaces:
            report = await consolidator.consolidate(
                Tenant.system(namespace, principal="cli:consolidate"), actor="cli:consolidate")
            created = {k: len(v) for k, v in report.created.items()}
            reinforced = {k: len(v) for k, v in report.reinforced.items()}
            print(f"{namespace}: created {created or 'nothing'}, reinforced"
                  f" {reinforced or 'nothing'}, decayed {report.decayed},"
                  f" pruned {len(report.pruned)}")
