"""The schema: queries and mutations joined, error codes attached."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry import Schema
from strawberry.extensions import ParserCache, SchemaExtension, ValidationCache
from strawberry.schema.config import BatchingConfig, StrawberryConfig
from strawberry.schema.name_converter import NameConverter
from strawberry.types import ExecutionContext

from memlattice.resolvers.conversations import ConversationMutation, ConversationQuery
from memlattice.resolvers.documents import DocumentShape
from memlattice.resolvers.errors import ErrorCodes, coded_stream
from memlattice.resolvers.key_recheck import KeyRecheck
from memlattice.resolvers.knowledge import KnowledgeMutation, KnowledgeQuery
from memlattice.resolvers.mutations import Mutation
from memlattice.resolvers.notes import ResultNotes
from memlattice.resolvers.queries import Query
from memlattice.resolvers.scalars import SCALARS
from memlattice.resolvers.subscriptions import Subscription
from memlattice.resolvers.updates import UpdatesMutation, UpdatesQuery
from memlattice.resolvers.wipe import WipeMutation

# Per-domain resolvers joined into the root types.


# The roots joined from their per-domain parts, as strawberry's merge_types joins them,
# spelled out so that each root carries the description a frontend reads first.
@strawberry.type(name="Query", description=(
    "Reads: memories by id, filter (a Relay connection) or search; their history,"
    " relationships and audit trail; typed records and facts; conversation sessions;"
    " namespace settings; update candidates. Every read names a namespace the caller's key may read."))
class RootQuery(Query, KnowledgeQuery, ConversationQuery, UpdatesQuery):
    pass


@strawberry.type(name="Mutation", description=(
    "Writes: memories, relationships, typed records and facts, conversations, revisions,"
    " forgetting and deleting, namespace settings, deciding update candidates. A refused write (an error with"
    " `extensions.code`) writes nothing."))
class RootMutation(Mutation, KnowledgeMutation, ConversationMutation, WipeMutation,
                   UpdatesMutation):
    pass


class RememberingNameConverter(NameConverter):
    """Converts each Python name to its GraphQL name once.

    Strawberry asks for a field's GraphQL name every time it converts an input
    object's value, so a `writeMemories` batch of 1000 inputs camel-cased 25,000
    names per request (a tenth of the request's Python time). The answer depends
    on the name alone.
    """

    def __init__(self, auto_camel_case: bool = True) -> None:
        super().__init__(auto_camel_case=auto_camel_case)
        self._names: dict[str, str] = {}

    def apply_naming_config(self, name: str) -> str:
        known = self._names.get(name)
        if known is None:
            known = self._names[name] = super().apply_naming_config(name)
        return known


class MemlatticeSchema(Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        """Errors are logged by ErrorCodes (unexpected ones only); expected ones are data."""

    async def stream(self, *args: Any, **kwargs: Any) -> Any:
        """Subscriptions (over WebSockets) get the same error codes as HTTP results."""
        return coded_stream(await super().stream(*args, **kwargs))


def build_schema(
    extensions: Sequence[Callable[[], SchemaExtension]] = (), *, max_batch_operations: int = 0,
) -> MemlatticeSchema:
    """The schema with extra per-request extensions (the app adds limits and metrics).

    `max_batch_operations` > 0 accepts HTTP batches (a JSON array) of that many
    operations at most; 0 refuses batches.
    """
    batching: BatchingConfig | None = (
        {"max_operations": max_batch_operations} if max_batch_operations > 0 else None)
    return MemlatticeSchema(
        query=RootQuery, mutation=RootMutation, subscription=Subscription,
        # Agents repeat the same documents: parse and validate each one once.
        extensions=[ErrorCodes, DocumentShape, KeyRecheck, ResultNotes, *extensions, ParserCache,
                    ValidationCache],
        config=StrawberryConfig(scalar_map=SCALARS, batching_config=batching,
                                name_converter=RememberingNameConverter()),
    )


schema = build_schema()
