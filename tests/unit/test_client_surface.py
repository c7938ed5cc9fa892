"""The Python client covers the whole API, and speaks its conventions."""

from __future__ import annotations

import inspect
import subprocess
import sys
from datetime import UTC, datetime

from pydantic.alias_generators import to_snake

import memlattice_client
from memlattice.resolvers.schema import schema
from memlattice_client import (
    AsyncMemlatticeClient,
    ForbiddenError,
    MemlatticeClient,
    MemlatticeError,
    Scope,
    UnauthenticatedError,
    UnavailableError,
    ValidationError,
    VersionConflictError,
)
from memlattice_client._errors import ERRORS_BY_CODE, error_from_graphql, error_from_status
from memlattice_client._events import SUBSCRIPTIONS
from memlattice_client._inputs import to_graphql
from memlattice_client._operations import OPERATIONS


def _schema_operations() -> set[str]:
    graphql = schema._schema
    return {name for root in (graphql.query_type, graphql.mutation_type) if root
            for name in root.fields}


def test_every_subscription_has_an_async_client_method() -> None:
    root = schema._schema.subscription_type
    fields = set(root.fields) if root else set()
    assert fields == set(SUBSCRIPTIONS)
    for field in fields:
        assert callable(getattr(AsyncMemlatticeClient, to_snake(field)))


def test_every_schema_operation_has_a_client_operation() -> None:
    missing = _schema_operations() - set(OPERATIONS)
    assert not missing, f"add client operations (memlattice_client/_operations.py): {missing}"


def test_client_operations_exist_in_the_schema() -> None:
    assert set(OPERATIONS) <= _schema_operations()


def test_both_clients_have_a_method_per_operation() -> None:
    for field in OPERATIONS:
        name = to_snake(field)
        assert callable(getattr(MemlatticeClient, name)), name
        assert inspect.iscoroutinefunction(getattr(AsyncMemlatticeClient, name)), name


def test_every_document_validates_against_the_schema() -> None:
    from graphql import parse, validate

    for field, builder in OPERATIONS.items():
        params = inspect.signature(builder).parameters
        args = ["x"] * sum(1 for p in params.values()
                           if p.default is inspect.Parameter.empty
                           and p.kind is p.POSITIONAL_OR_KEYWORD)
        if field in ("writeMemories", "addEdges"):
            args[-1] = []  # type: ignore[call-overload]
        call = builder(*args)
        errors = validate(schema._schema, parse(call.document))
        assert not errors, (field, errors)


def test_method_signatures_read_like_methods() -> None:
    sig = inspect.signature(MemlatticeClient.write_memory)
    assert list(sig.parameters)[:3] == ["self", "namespace", "content"]
    assert sig.return_annotation == "Memory"


def test_public_surface_is_pinned() -> None:
    assert memlattice_client.__all__ == sorted(memlattice_client.__all__)
    for name in memlattice_client.__all__:
        assert hasattr(memlattice_client, name)


def test_client_does_not_import_the_server() -> None:
    code = ("import sys, memlattice_client; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('memlattice', 'graph', 'resolvers', 'neo4j', 'strawberry', 'wordllama')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_errors_map_by_code() -> None:
    error = error_from_graphql({"message": "stale", "path": ["updateMemory"],
                                "extensions": {"code": "VERSION_CONFLICT", "current": 3}})
    assert isinstance(error, VersionConflictError)
    assert (error.code, error.message, error.path) == ("VERSION_CONFLICT", "stale",
                                                       ["updateMemory"])
    assert error.extensions["current"] == 3
    unknown = error_from_graphql({"message": "m", "extensions": {"code": "TEAPOT"}})
    assert type(unknown) is MemlatticeError and unknown.code == "TEAPOT"
    assert isinstance(error_from_graphql({"message": "m", "extensions": {"code": "BAD_REQUEST"}}),
                      ValidationError)
    assert isinstance(error_from_status(401, ""), UnauthenticatedError)
    assert isinstance(error_from_status(403, "no"), ForbiddenError)
    assert isinstance(error_from_status(502, "bad gateway"), UnavailableError)


def test_every_server_error_code_has_its_client_class() -> None:
    import memlattice.core.errors as server

    codes = {cls.code for cls in vars(server).values()
             if isinstance(cls, type) and issubclass(cls, server.MemlatticeError)}
    codes -= {"PROVISIONING"}  # raised by the CLI's Neo4j provisioning, never over the API
    missing = codes - set(ERRORS_BY_CODE)
    assert not missing, f"add client error classes (memlattice_client/_errors.py): {missing}"
    for code in codes:
        assert ERRORS_BY_CODE[code].code == code or code == "BAD_REQUEST"


def test_inputs_use_api_spelling_but_keep_caller_json() -> None:
    sent = to_graphql({"namespace": "n", "tags_any": ["a"], "scope": "session",
                       "metadata": {"snake_key": {"inner_key": 1}},
                       "context": {"agent_id": "a1"}, "scopes": [Scope.USER, "agent"],
                       "created_after": datetime(2026, 1, 1, tzinfo=UTC)})
    assert sent == {"namespace": "n", "tagsAny": ["a"], "scope": "SESSION",
                    "metadata": {"snake_key": {"inner_key": 1}}, "context": {"agentId": "a1"},
                    "scopes": ["USER", "AGENT"], "createdAfter": "2026-01-01T00:00:00+00:00"}


def test_environment_configures_url_and_key(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMLATTICE_URL", "http://memory.internal:9000/")
    monkeypatch.setenv("MEMLATTICE_API_KEY", "mlk_abc")
    with MemlatticeClient() as client:
        assert client.endpoint == "http://memory.internal:9000/graphql"
        assert client.headers["authorization"] == "Bearer mlk_abc"
    with MemlatticeClient("http://other/graphql", api_key="k2") as client:
        assert client.endpoint == "http://other/graphql"
        assert client.headers["authorization"] == "Bearer k2"


def test_unreachable_server_is_unavailable() -> None:
    with MemlatticeClient("http://127.0.0.1:9", timeout=2) as client:
        try:
            client.memory("n", "x")
        except UnavailableError as exc:
            assert exc.code == "UNAVAILABLE"
        else:
            raise AssertionError("expected UnavailableError")
