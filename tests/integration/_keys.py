"""API keys for the auth tests: real keys in the real graph, clients that send them.

The session app (tests/conftest.py) runs in `keys` mode; these helpers mint
keys through the same code as `memlattice keys create` and talk to that app
with them, or with no key at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from memlattice.core.model import Scope, Sensitivity
from memlattice.graph.keys import ApiKeyGraph
from memlattice.services.apikeys import KeySpec, create_key
from tests.conftest import GraphQLClient


async def make_key(graph_client: Any, *namespaces: str, write: bool = True,
                   max_scope: Scope = Scope.AGENT, clearance: Sensitivity = Sensitivity.LOW,
                   admin: bool = False, name: str = "test-key") -> str:
    """A new key's secret."""
    _, secret = await create_key(ApiKeyGraph(graph_client), KeySpec(
        name=name, namespaces=namespaces or None, max_scope=max_scope, clearance=clearance,
        can_write=write, admin=admin))
    return secret


@asynccontextmanager
async def client_with(session_app: tuple[Any, Any], headers: dict[str, str] | None = None,
                      actor: str = "tester") -> AsyncIterator[GraphQLClient]:
    """A GraphQL client on the session app sending exactly `headers` (no default key)."""
    transport = httpx.ASGITransport(app=session_app[1])
    async with httpx.AsyncClient(transport=transport, base_url="http://test",
                                 headers=headers or {}) as http:
        yield GraphQLClient(http, actor=actor)


@asynccontextmanager
async def as_key(session_app: tuple[Any, Any], secret: str,
                 actor: str = "tester") -> AsyncIterator[GraphQLClient]:
    async with client_with(session_app, {"authorization": f"Bearer {secret}"}, actor) as gql:
        yield gql
