"""`memlattice keys`: create, list and revoke API keys (stored hashed in Neo4j), and
set their limits (requests a second and burst, operations in flight, live
subscriptions, query cost a second and its burst; unset: the server's
MEMLATTICE_FAIRNESS_* defaults; 0: no limit).

The secret is printed once, on creation; the graph keeps only its SHA-256.
Revocation takes effect on the next request (the server does not cache keys).
"""

from __future__ import annotations

import argparse
import asyncio
import textwrap
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # imported where used: `memlattice --help` must not load the driver
    from memlattice.core.settings import Settings
    from memlattice.graph.keys import ApiKeyGraph

T = TypeVar("T")

# memlattice.core.model's Scope and Sensitivity values (tests/unit/test_cli_help.py checks
# they agree), spelled out so that building the parser imports no model.
SCOPES = ["task", "session", "user", "agent"]
CLEARANCES = ["public", "low", "medium", "high", "hyper"]

EPILOG = textwrap.dedent("""\
    examples:
      memlattice keys create --name crm-agent --namespace acme/crm --namespace 'acme/shared/*' \\
          --max-scope agent --clearance medium --read-write
      memlattice keys create --name ops --admin
      memlattice keys create --name batch-loader --namespace acme/crm --read-write \\
          --rate 20 --burst 40 --concurrent 4 --cost-rate 50000
      memlattice keys limits 3f9a0c1b2d4e --rate 5 --reset cost_rate
      memlattice keys list
      memlattice keys revoke 3f9a0c1b2d4e
    """)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("keys", help="create, list, limit and revoke API keys",
                            description=__doc__, epilog=EPILOG,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest="keys_action", required=True)

    create = actions.add_parser("create", help="create a key; prints its secret once")
    create.add_argument("--name", required=True, help="who or what the key is for")
    create.add_argument("--namespace", action="append", default=[], metavar="NS",
                        help="a namespace the key may use: exact (acme/crm), a prefix pattern"
                        " (acme/*), or * for all; repeatable")
    create.add_argument("--max-scope", choices=SCOPES, default="agent",
                        help="broadest scope the key may read or write (default: agent = all)")
    create.add_argument("--clearance", choices=CLEARANCES, default="low",
                        help="most sensitive records the key may see or write (default: low)")
    access = create.add_mutually_exclusive_group()
    access.add_argument("--read-only", dest="write", action="store_false",
                        help="the key may only read (the default)")
    access.add_argument("--read-write", dest="write", action="store_true",
                        help="the key may also write")
    create.add_argument("--admin", action="store_true",
                        help="an operator's key: every namespace, scope and clearance, writes")
    _limit_arguments(create)
    create.set_defaults(func=cmd_create, write=False)

    limits = actions.add_parser(
        "limits", help="change a key's limits; a key in use sees them within a second",
        description="Change a key's limits. A key in use sees them within a second: while"
        " it floods, its refusals skip the look-up of the key for that long"
        " (MEMLATTICE_FAIRNESS_EARLY_REFUSAL_S).")
    limits.add_argument("key_id")
    _limit_arguments(limits)
    limits.add_argument("--reset", action="append", default=[], choices=LIMITS,
                        metavar="LIMIT", help="back to the server's default: one of"
                        f" {', '.join(LIMITS)}; repeatable")
    limits.set_defaults(func=cmd_limits)

    actions.add_parser("list", help="list keys (never their secrets)").set_defaults(
        func=cmd_list)
    revoke = actions.add_parser(
        "revoke", help="revoke a key by id; a key in use is refused within a second")
    revoke.add_argument("key_id")
    revoke.set_defaults(func=cmd_revoke)


# memlattice.core.fairness.KeyLimits' fields, spelled out for the same reason.
LIMITS = ["rate", "burst", "concurrent", "streams", "cost_rate", "cost_burst"]
_LIMIT_HELP = {
    "rate": (float, "requests a second (HTTP requests and WebSocket operations)"),
    "burst": (float, "the request bucket's size: requests that may be sent at once after"
                       " a quiet spell"),
    "concurrent": (int, "operations in flight at once"),
    "streams": (int, "live WebSocket subscriptions at once"),
    "cost_rate": (float, "estimated query cost a second (see docs/api.md, limits); unset"
                  " on a key that sets --rate: that rate times"
                  " MEMLATTICE_FAIRNESS_REQUEST_COST"),
    "cost_burst": (float, "the cost bucket's size: query cost that may be spent at once after"
                   " a quiet spell; unset on a key that sets"
                   " --rate: its burst times MEMLATTICE_FAIRNESS_REQUEST_COST"),
}


def _limit_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("limits (unset: the server's default; 0: no limit)")
    for name, (kind, help) in _LIMIT_HELP.items():
        group.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind,
                           metavar="N", help=help)


def _limits_of(args: argparse.Namespace) -> object:
    from memlattice.core.fairness import KeyLimits

    return KeyLimits(**{name: getattr(args, name) for name in LIMITS})


def _with_keys(settings: Settings, work: Callable[[ApiKeyGraph], Awaitable[T]]) -> T:
    from memlattice.graph.keys import ApiKeyGraph
    from memlattice.server.graph_opening import open_graph

    async def run() -> T:
        # The key store needs no migration to read or write; `serve` and `migrate` do it.
        async with open_graph(settings, migrate_schema=False) as graph:
            return await work(ApiKeyGraph(graph.client))

    return asyncio.run(run())


def cmd_create(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.core.model import Scope, Sensitivity
    from memlattice.services.apikeys import KeySpec, create_key, describe

    spec = KeySpec(name=args.name, namespaces=tuple(args.namespace) or None,
                   max_scope=Scope(args.max_scope), clearance=Sensitivity(args.clearance),
                   can_write=args.write, admin=args.admin, limits=_limits_of(args))  # type: ignore[arg-type]
    stored, secret = _with_keys(settings, lambda graph: create_key(graph, spec))
    (row,) = describe([stored])
    print(f"created key {row['id']} ({row['name']}): namespaces {row['namespaces']},"
          f" max scope {row['max_scope']}, clearance {row['clearance']}, {row['access']},"
          f" limits {row['limits']}")
    print("secret (shown once; store it now):")
    print(secret)


def cmd_list(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.services.apikeys import describe, list_keys

    rows = describe(_with_keys(settings, list_keys))
    if not rows:
        print("no keys")
        return
    columns = list(rows[0])
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns}
    print("  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip())
    for row in rows:
        print("  ".join(row[c].ljust(widths[c]) for c in columns).rstrip())


def cmd_revoke(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.services.apikeys import revoke_key

    stored = _with_keys(settings, lambda graph: revoke_key(graph, args.key_id))
    print(f"revoked key {stored.id} ({stored.name})")


def cmd_limits(args: argparse.Namespace, settings: Settings) -> None:
    from memlattice.services.apikeys import describe, set_key_limits

    stored = _with_keys(settings, lambda graph: set_key_limits(
        graph, args.key_id, _limits_of(args), reset=args.reset))  # type: ignore[arg-type]
    (row,) = describe([stored])
    print(f"key {row['id']} ({row['name']}): limits {row['limits']}")
