"""`memlattice reembed`: move a namespace to another embedding model, with progress.

The service does the same in the background after `configureNamespace`; this
command runs the build in the foreground (a large namespace, a batch window,
a server that is not running) and shows how far it has come. It is safe to
run beside a live service: both take what is missing from the graph.
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
      memlattice reembed --namespace team/alice --model l2_supercat --dimension 128
      memlattice reembed --namespace team/alice          # finish a build already configured
      memlattice reembed --namespace team/alice --status # show the namespace's vector spaces
    """)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "reembed", help="re-embed a namespace with another model (progress bar)",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namespace", required=True, help="the namespace to re-embed")
    parser.add_argument("--model", help="model of the server's embedding provider"
                        " (default: keep the one configured)")
    parser.add_argument("--dimension", type=int,
                        help="vector size (default: MEMLATTICE_EMBEDDING_DIMENSION)")
    parser.add_argument("--status", action="store_true", help="only print the namespace's state")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> None:
    asyncio.run(_run(args, settings))


async def _run(args: argparse.Namespace, settings: Settings) -> None:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from memlattice.core.model import validate_namespace
    from memlattice.core.search_config import NamespaceSettings
    from memlattice.server.runtime import open_runtime

    namespace = validate_namespace(args.namespace)
    # No background loop: this command builds the space itself, in the foreground.
    async with open_runtime(settings, background=False) as runtime:
        spaces = runtime.reembedder.spaces
        if args.model and not args.status:
            # Recorded like configureNamespace, so the service searches the same space.
            defaults = runtime.service.namespaces
            current = await defaults.settings(namespace)
            dimension = args.dimension or settings.embedding.dimension
            await spaces.configure(namespace, args.model, dimension)
            await defaults.configure(namespace, NamespaceSettings(**{
                **current.model_dump(), "embedding_model": args.model,
                "embedding_dimension": dimension}), actor="cli:reembed")
        report = await spaces.report(namespace)
        state = report.state
        if not args.status and state.target is not None:
            with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                          MofNCompleteColumn(), TimeRemainingColumn()) as bar:
                task = bar.add_task(f"{namespace} → {state.target.key}",
                                    total=report.progress.total,
                                    completed=report.progress.embedded)
                await runtime.reembedder.build(state,
                                               on_progress=lambda n: bar.advance(task, n))
            report = await spaces.report(namespace)
            state = report.state
        print(f"{namespace}: searches {report.active.key}; status {state.status.value}"
              + (f" (building {state.target.key}: {report.progress.embedded}"
                 f"/{report.progress.total})" if state.target else "")
              + (f"; error: {state.error}" if state.error else ""))
