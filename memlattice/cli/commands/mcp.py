"""`memlattice mcp`: serve the memory tools to MCP agents (Claude Desktop, IDEs, SDKs).

The server runs Memlattice in-process (its own Neo4j driver, the same settings
and environment as `memlattice serve`) and exposes the tools remember, recall,
supersede, link, forget, get, browse, neighbourhood, ingest_conversation,
store_fact and recall_facts (docs/mcp.md). Calls that name no namespace use
--namespace (default: MEMLATTICE_MCP_NAMESPACE). Every tool call is authorised
with an API key exactly as GraphQL requests are:

  stdio   the key in MEMLATTICE_API_KEY identifies the one agent on the pipe
  http    streamable HTTP at http://HOST:PORT/mcp; each request sends
          `Authorization: Bearer <key>`
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `memlattice --help` imports no more than argparse needs
    from memlattice.core.settings import Settings

EPILOG = textwrap.dedent("""\
    examples:
      MEMLATTICE_API_KEY=mlk_... memlattice mcp                 # stdio, for a local agent
      MEMLATTICE_API_KEY=mlk_... memlattice mcp --namespace team/notes
      memlattice mcp --transport http --port 8765               # remote agents, key per request

    Claude Desktop / any stdio MCP client configuration:
      {"mcpServers": {"memlattice": {"command": "/path/to/.venv/bin/memlattice",
         "args": ["mcp"], "env": {"MEMLATTICE_API_KEY": "mlk_...",
                                  "MEMLATTICE_MCP_NAMESPACE": "team/notes",
                                  "NEO4J_PASSWORD": "..."}}}}
    """)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("mcp", help="serve the memory tools over MCP (stdio or HTTP)",
                            description=__doc__, epilog=EPILOG,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                        help="stdio (default) for one local agent; http for streamable HTTP")
    parser.add_argument("--host", default=None,
                        help="HTTP bind address (default: MEMLATTICE_HOST, 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default: 8765)")
    parser.add_argument("--namespace", default=None,
                        help="the namespace of calls that name none"
                             " (default: MEMLATTICE_MCP_NAMESPACE; unset: calls must name one)")
    parser.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice import mcp as mcp_server
    from memlattice.mcp.runner import NAMESPACE_ENV, default_namespace

    try:
        namespace = (default_namespace(args.namespace, "--namespace") if args.namespace
                     else default_namespace(os.environ.get(NAMESPACE_ENV)))
    except ValueError as exc:
        sys.exit(f"memlattice mcp: {exc}")
    if args.transport == "stdio":
        # stdout is the protocol channel: everything else goes to stderr.
        logging.getLogger().handlers[:] = [logging.StreamHandler(sys.stderr)]
        if not os.environ.get("MEMLATTICE_API_KEY") and settings.auth_mode == "keys":
            print("memlattice mcp: MEMLATTICE_API_KEY is not set; every tool call will be"
                  " refused (create a key with `memlattice keys create`)", file=sys.stderr)
        asyncio.run(mcp_server.run_stdio(settings, os.environ.get("MEMLATTICE_API_KEY"),
                                         namespace))
        return
    import uvicorn

    host = args.host or settings.host
    if args.host:
        settings = settings.model_copy(update={"host": args.host})
    print(f"MCP (streamable HTTP) at http://{host}:{args.port}/mcp", file=sys.stderr)
    uvicorn.run(mcp_server.http_app(settings, default_namespace=namespace), host=host, port=args.port, log_level="info")
