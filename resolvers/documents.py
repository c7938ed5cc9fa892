"""Two checks on a GraphQL document that graphql-core leaves to the server.

* Nesting: a document's brackets may nest at most MAX_REQUEST_DEPTH levels,
  counted by a loop before the (recursive) parser sees the text; a deeper one
  is BAD_REQUEST. The parser's own guard fires only near the interpreter's
  recursion limit, and the steps after parsing recurse too.
* Operation choice: a document with several operations and no `operationName`
  is the GraphQL spec's request error ("Must provide operation name ..."),
  BAD_REQUEST. Strawberry ran the first operation instead.

Both raise before validation, so nothing runs; subscriptions over the
WebSocket are checked the same way.

`is_subscription` tells a WebSocket's live subscription from a query or mutation
sent over it (memlattice.server.ws_messages: the first holds a stream slot, the
others are admitted, shared and paced as HTTP requests).
"""

from __future__ import annotations

from collections.abc import Iterator

from graphql import GraphQLError, OperationDefinitionNode, OperationType, get_operation_ast, parse
from strawberry.extensions import SchemaExtension

from memlattice.core.errors import BadRequest
from memlattice.core.nesting import MAX_REQUEST_DEPTH, document_depth

MULTIPLE_OPERATIONS = "Must provide operation name if query contains multiple operations."


class DocumentShape(SchemaExtension):
    def on_parse(self) -> Iterator[None]:
        query = self.execution_context.query
        if query and document_depth(query) > MAX_REQUEST_DEPTH:
            raise BadRequest(f"the document is nested more than {MAX_REQUEST_DEPTH} levels"
                             " deep", limit=MAX_REQUEST_DEPTH)
        yield

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        # The name the caller sent: `operation_name` falls back to the first one's.
        named = getattr(context, "_provided_operation_name", None)
        if document is not None and named is None and sum(
                isinstance(d, OperationDefinitionNode) for d in document.definitions) > 1:
            raise BadRequest(MULTIPLE_OPERATIONS)
        yield


def is_subscription(query: str, operation_name: str | None) -> bool:
    """Whether the operation `query` runs (the one named, or its only one) is a
    subscription. A document that does not parse, nests too deep or does not say
    which operation to run is not one: it is refused when run, as over HTTP."""
    if document_depth(query) > MAX_REQUEST_DEPTH:
        return False
    try:
        document = parse(query, no_location=True)
    except GraphQLError:
        return False
    operation = get_operation_ast(document, operation_name)
    return operation is not None and operation.operation is OperationType.SUBSCRIPTION
