"""Names each GraphQL operation for metrics: its type and root field(s).

The label is read from the validated document, so it only ever holds field
names the schema defines (a client-chosen `operationName` would let anyone
create unbounded metric series). The HTTP view puts an `OperationLabel` in a
context variable before executing; this extension fills it in.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from graphql import FieldNode, OperationDefinitionNode
from strawberry.extensions import SchemaExtension

MAX_NAMED_FIELDS = 3


@dataclass
class OperationLabel:
    operation: str = "invalid"
    type: str = "unknown"


CURRENT: ContextVar[OperationLabel | None] = ContextVar("memlattice_operation", default=None)


class LabelOperation(SchemaExtension):
    def on_execute(self) -> Iterator[None]:
        label = CURRENT.get()
        context = self.execution_context
        if label is not None and context.graphql_document is not None:
            operations = [d for d in context.graphql_document.definitions
                          if isinstance(d, OperationDefinitionNode)
                          and (context.operation_name is None
                               or (d.name is not None
                                   and d.name.value == context.operation_name))]
            if operations:
                operation = operations[0]
                label.type = operation.operation.value
                names = sorted({s.name.value for s in operation.selection_set.selections
                                if isinstance(s, FieldNode)})
                label.operation = ("+".join(names) if len(names) <= MAX_NAMED_FIELDS
                                   else "multiple") or "fragments"
        yield
