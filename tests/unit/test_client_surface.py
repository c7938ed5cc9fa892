"""The Python client covers the whole API, and speaks its conventions.

These compare the client with the server (its schema, its error codes); the
client's own tests, which need no server package, are in client/tests."""

from __future__ import annotations

import inspect
import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from pydantic.alias_generators import to_snake

import memlattice_client
from memlattice.resolvers.schema import schema
from memlattice_client import AsyncMemlatticeClient, MemlatticeClient
from memlattice_client._errors import ERRORS_BY_CODE
from memlattice_client._events import SUBSCRIPTIONS
from memlattice_client._operations import OPERATIONS

ROOT = Path(__file__).resolve().parents[2]


def _pyproject(path: Path) -> dict[str, Any]:
    with path.open("rb") as file:
        return tomllib.load(file)


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
    assert not missing, ("add client operations "
                         f"(client/memlattice_client/_operations.py): {missing}")


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


def test_every_server_error_code_has_its_client_class() -> None:
    import memlattice.core.errors as server

    codes = {cls.code for cls in vars(server).values()
             if isinstance(cls, type) and issubclass(cls, server.MemlatticeError)}
    # Raised by the CLI (Neo4j provisioning, `memlattice restore`), never over the API.
    codes -= {"PROVISIONING", "EMBEDDING_MODEL_MISMATCH"}
    missing = codes - set(ERRORS_BY_CODE)
    assert not missing, ("add client error classes "
                         f"(client/memlattice_client/_errors.py): {missing}")
    for code in codes:
        assert ERRORS_BY_CODE[code].code == code or code == "BAD_REQUEST"


def test_the_server_depends_on_this_client_version() -> None:
    """The server pins the client distribution of client/; bumping one without the other
    would make `pip install -e ./client -e .` (./dev, the Dockerfile) unresolvable."""
    server = _pyproject(ROOT / "pyproject.toml")["project"]
    client = _pyproject(ROOT / "client" / "pyproject.toml")["project"]
    [pinned] = [Requirement(r) for r in server["dependencies"]
                if Requirement(r).name == client["name"]]
    assert pinned.specifier.contains(client["version"]), (pinned, client["version"])


def test_the_server_distribution_does_not_carry_the_client_package() -> None:
    found = _pyproject(ROOT / "pyproject.toml")["tool"]["setuptools"]["packages"]["find"]
    assert found["include"] == ["memlattice", "memlattice.*"]
    assert not (ROOT / "memlattice_client").exists()


def test_the_client_in_use_is_the_one_in_client() -> None:
    """./dev installs client/ editable, so tests never run a stale copy of the client."""
    package = Path(memlattice_client.__file__).resolve().parent
    assert package == ROOT / "client" / "memlattice_client"


def test_every_install_of_the_server_names_the_client_folder() -> None:
    """memlattice-client comes from client/, never from a package index: ./dev and the
    Dockerfile install the folder in the same pip command as the server."""
    assert "pip install -q -e ./client -e '.[dev]'" in (ROOT / "dev").read_text()
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    assert "COPY client ./client" in dockerfile
    assert "RUN pip install ./client . " in dockerfile


def _deprecated_inputs(type_: Any, value: Any, path: str) -> list[str]:
    """The deprecated input fields `value` (a variable's value) uses, by path."""
    from graphql import GraphQLInputObjectType, get_nullable_type, is_list_type

    type_ = get_nullable_type(type_)
    if is_list_type(type_) and isinstance(value, list):
        return [found for item in value
                for found in _deprecated_inputs(type_.of_type, item, path + "[]")]
    if not isinstance(type_, GraphQLInputObjectType) or not isinstance(value, dict):
        return []
    found = []
    for name, item in value.items():
        field = type_.fields[name]
        if field.deprecation_reason is not None:
            found.append(f"{path}.{name}")
        found += _deprecated_inputs(field.type, item, f"{path}.{name}")
    return found


def test_client_sends_no_deprecated_field_or_argument() -> None:
    """docs/api.md, "One vocabulary": the client speaks the current names only, in its
    documents and in the variables it builds (old keywords are translated)."""
    import warnings

    from graphql import OperationDefinitionNode, parse, type_from_ast, validate
    from graphql.validation import NoDeprecatedCustomRule

    from memlattice_client import _operations as ops

    for field, builder in OPERATIONS.items():
        params = inspect.signature(builder).parameters
        args = ["x"] * sum(1 for p in params.values()
                           if p.default is inspect.Parameter.empty
                           and p.kind is p.POSITIONAL_OR_KEYWORD)
        if field in ("writeMemories", "addEdges"):
            args[-1] = []  # type: ignore[call-overload]
        errors = validate(schema._schema, parse(builder(*args).document),
                          [NoDeprecatedCustomRule])
        assert not errors, (field, errors)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        calls = [ops.search("n", "q", embedding=[1.0], user_id="u", scope="user",
                            filter={"user_id": "u"}),
                 ops.search("n", "q", vector=[1.0], context={"user_id": "u"}),
                 ops.add_edge("n", "a", "b", "RELATED", metadata={"k": 1})]
    for call in calls:
        [operation] = parse(call.document).definitions
        assert isinstance(operation, OperationDefinitionNode)
        for definition in operation.variable_definitions:
            type_ = type_from_ast(schema._schema, definition.type)
            value = call.variables.get(definition.variable.name.value)
            assert _deprecated_inputs(type_, value, call.field) == [], call.field


def test_the_deprecated_input_check_finds_old_spellings() -> None:
    """The check above can fail: it finds `vector` and `context` in a search's input."""
    search_input = schema._schema.type_map["SearchInput"]
    used = {"filter": {"namespace": "n"}, "vector": [1.0], "context": {"userId": "u"}}
    assert _deprecated_inputs(search_input, used, "input") == ["input.vector", "input.context"]
