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
"""

from __future__ import annotations

from collections.abc import Iterator

from graphql import OperationDefinitionNode
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
