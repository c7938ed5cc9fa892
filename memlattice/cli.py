"""`memlattice`: run the service and manage its local Neo4j.

    memlattice serve              start Neo4j if needed, migrate, serve GraphQL
    memlattice neo4j start        provision (Maven Central) and start a local Neo4j
    memlattice neo4j stop|status  stop it, or say whether it runs
    memlattice migrate            apply pending schema migrations and exit
    memlattice export-schema      print the GraphQL SDL (schema.graphql is this output)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time

from memlattice.errors import MemlatticeError
from memlattice.settings import Settings


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
    import uvicorn

    from memlattice.app import create_app

    if not args.no_neo4j:
        _start_local_neo4j(settings)
    print(f"GraphQL at http://{settings.host}:{settings.port}/graphql")
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port,
                log_level="info", timeout_graceful_shutdown=30)


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
        print("stopped" if neo4j_local.stop(local) else "not running")
    else:
        status = neo4j_local.status(local)
        state = f"running (pid {status.pid})" if status.running else "not running"
        print(f"Neo4j {status.version} at {status.bolt_uri}: {state}; home {status.home}")
        if not status.running:
            sys.exit(3)


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> None:
    from graph.client import GraphClient
    from graph.migrations import migrate
    from memlattice.app import resolve_neo4j_uri

    async def run() -> list[int]:
        client = GraphClient.connect(resolve_neo4j_uri(settings), settings.neo4j.user,
                                     settings.neo4j.password.get_secret_value(),
                                     settings.neo4j.database)
        try:
            return await migrate(client, dimension=settings.embedding.dimension,
                                    index=settings.vector_index)
        finally:
            await client.close()

    applied = asyncio.run(run())
    print(f"applied migrations {applied}" if applied else "schema is up to date")


def cmd_export_schema(args: argparse.Namespace, settings: Settings) -> None:
    from resolvers.schema import schema

    sys.stdout.write(schema.as_str() + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memlattice", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="start Neo4j if needed, migrate, and serve GraphQL")
    serve.add_argument("--no-neo4j", action="store_true",
                       help="do not start a local Neo4j (use NEO4J_URI's server)")
    serve.set_defaults(func=cmd_serve)
    neo4j = sub.add_parser("neo4j", help="manage the locally provisioned Neo4j")
    neo4j.add_argument("action", choices=["start", "stop", "status", "install"])
    neo4j.set_defaults(func=cmd_neo4j)
    sub.add_parser("migrate", help="apply pending migrations").set_defaults(func=cmd_migrate)
    sub.add_parser("export-schema", help="print the GraphQL SDL").set_defaults(
        func=cmd_export_schema)
    return parser


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    args = build_parser().parse_args(argv)
    try:
        args.func(args, Settings())
    except MemlatticeError as exc:
        print(f"memlattice: {exc.message}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
