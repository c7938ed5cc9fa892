"""The schema: queries and mutations joined, error codes attached."""

from __future__ import annotations

from graphql import GraphQLError
from strawberry import Schema
from strawberry.extensions import ParserCache, ValidationCache
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext

from resolvers.errors import ErrorCodes
from resolvers.mutations import Mutation
from resolvers.queries import Query
from resolvers.scalars import SCALARS


class MemlatticeSchema(Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        """Errors are logged by ErrorCodes (unexpected ones only); expected ones are data."""


schema = MemlatticeSchema(
    query=Query, mutation=Mutation,
    # Agents repeat the same documents: parse and validate each one once.
    extensions=[ErrorCodes, ParserCache, ValidationCache],
    config=StrawberryConfig(scalar_map=SCALARS),
)
