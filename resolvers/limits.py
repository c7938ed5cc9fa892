"""What one GraphQL operation may ask for: depth, aliases and cost.

The three are measured in one walk over the operation that is about to run,
after validation and with the request's variables known, so `first: $n`
costs what `$n` says. Fragments are measured once each (per page size; a
fragment that spreads another twice, ten levels deep, cannot make the walk
exponential), and cycles are left to graphql-core's validation, which runs first.

    cost(field)   = 1 + multiplier * cost(its selections)
    multiplier    = `first`, `input.limit` or `len(inputs)` when the field has one,
                    the size its parent was given for a list in PAGES,
                    1 for a list in LOADED_WITH_PARENT,
                    DEFAULT_LIST_SIZE for other list fields, otherwise 1
    except that a field holding PAGES (`memories(first: n)`, a connection;
    `summarize(window: {limit: n})`; `mergeRecords(ids: [...])`, a revision) spends
    its size on those lists only:
    cost(field)   = 1 + cost(its selections), its pages each n times their items

A hit's `conflicts` and `path`, a memory's `nearDuplicates`, and a typed record's
`toolCalls`, `planNodes`, `planEdges` and `evidence` (a fact hit's `evidence` is its
fact's) are LOADED_WITH_PARENT: fields without a resolver that hold what the query
that loaded their parent already read, whatever is selected (the recall query reads
every hit's conflicts; graph.records.RECORD_RETURN collects a record's tool calls,
plan nodes and edges and evidence with the record). They cause no database work of
their own, and hold nothing or a few items (`nearDuplicates` is empty but on write
results; a record's lists are its own payload's, which `payload`, priced 1, carries
too, and are empty for the other types), not a page. Priced as a page of
DEFAULT_LIST_SIZE, a search hit selecting every field of its conflicts cost ten
times its own memory, and the Python client's search of ten hits 10,151 (about a
second of Neo4j work was priced as a hundred ordinary requests); served, it took
1.2 times as long as a search of ten hits' ids and contents (docs/api.md#limits).
A record selecting every field of its four lists was priced 217, three times its
73 (the client's `records` of fifty: 10,851, not 3,651).
Other lists without a resolver stay priced as pages (a check in tests/unit/
test_limits.py makes each new one a choice): an ingested conversation's memories
are as many as its messages, a write's hints as its candidates.

A size given to a field that is one object, not a list, sizes the lists it holds
(PAGES): one connection of `first` memories, one summary of at most `limit` bullets
from at most `limit` memories, one revision of the `len(ids)` records a merge
retired (UNSIZED_PAGE: one, the record a supersede, fork or contest revised).
Multiplying the whole field by it counted a connection's `totalCount` and
`pageInfo` once per memory, and a summary `limit` times, each with pages of
DEFAULT_LIST_SIZE: a summary of ten memories was priced as a hundred (4,631 for the
Python client's, every field), though the resolver builds one summary from one
search or listing (of 3 x `limit` memories at most). A revision's `previous` was
priced as ten records, though it holds the one it revised (2,390 for the client's
supersede, every field; now 149).

Introspection fields (`__schema`, `__type`, ...) are not counted: GraphiQL's
introspection query is deep by nature and is governed by its own switch.
An operation over a limit fails with TOO_COMPLEX before any resolver runs.
One within them is then charged its cost against the caller's key's cost
budget (memlattice.core.fairness): over it, RATE_LIMITED, also before any
resolver runs (HTTP 429 with `Retry-After`, memlattice.server.throttle).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLList,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    ListValueNode,
    ObjectValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValueNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
)
from strawberry.extensions import DisableIntrospection, MaxTokensLimiter, SchemaExtension
from strawberry.types.graphql import OperationType

from memlattice.core.errors import MemlatticeError, RateLimited, TooComplex
from memlattice.core.settings import LimitsSettings
from memlattice.resolvers.queries import MAX_PAGE

DEFAULT_LIST_SIZE = 10
SIZE_ARGUMENTS = ("first", "limit", "last")
MAX_INT = 2**31 - 1
# (type, field): the lists that the size given to the field holding them sizes (see
# above); the holder's other fields count once.
PAGES = frozenset({("MemoryConnection", "edges"), ("Summary", "bullets"),
                   ("Summary", "memories"), ("RevisionResult", "previous")})
# A holder's page when its field is given no size: what the server then serves
# (graph.cursors.DEFAULT_PAGE memories, a summary window's default limit; a unit
# test holds them equal, as resolvers do not import the graph's helpers; the one
# record a supersede, fork or contest revised).
UNSIZED_PAGE = {"MemoryConnection": 50, "Summary": 10, "RevisionResult": 1}


def _size(value: Any) -> int | None:
    """A usable size, or None: values GraphQL will refuse (bools, out of Int range)
    are left to variable coercion, so the caller gets its VALIDATION error."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_INT:
        # A page larger than any field serves is refused by its resolver with
        # VALIDATION, which says more than TOO_COMPLEX: cost it as the largest page.
        return max(1, min(value, MAX_PAGE))
    return None


# (type, field): lists read with their parent, whatever is selected, a few items at
# most; see above. Other lists without a resolver stay priced as pages: a summary's
# memories or an ingested conversation's are as many as its window or its messages.
LOADED_WITH_PARENT = frozenset({("SearchHit", "conflicts"), ("SearchHit", "path"),
                                ("Memory", "nearDuplicates"), ("Record", "toolCalls"),
                                ("Record", "planNodes"), ("Record", "planEdges"),
                                ("Record", "evidence"), ("FactHit", "evidence")})


def read_from_parent(definition: GraphQLField) -> bool:
    """Whether a field is a plain attribute of its parent's value (a strawberry field
    without a resolver): its data came with the parent, no query of its own."""
    field = definition.extensions.get("strawberry-definition")
    return field is not None and getattr(field, "base_resolver", True) is None


@dataclass(frozen=True)
class Measure:
    depth: int = 0
    aliases: int = 0
    cost: int = 0


class _Walker:
    """Measures one operation; memoises fragments by name."""

    def __init__(self, schema: GraphQLSchema, fragments: Mapping[str, FragmentDefinitionNode],
                 variables: Mapping[str, Any]) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.memo: dict[tuple[str, int | None], Measure] = {}

    def selections(self, node: SelectionSetNode | None, parent: GraphQLNamedType | None,
                   page: int | None = None) -> Measure:
        """`page`: the size given to `parent`'s field when `parent` holds PAGES."""
        if node is None:
            return Measure()
        depth = aliases = cost = 0
        for selection in node.selections:
            if isinstance(selection, FieldNode):
                part = self.field(selection, parent, page)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                kind = self.schema.get_type(condition.name.value) if condition else parent
                part = self.selections(selection.selection_set, kind, page)
            elif isinstance(selection, FragmentSpreadNode):
                part = self.fragment(selection.name.value, page)
            else:  # pragma: no cover - graphql-core has no other selection kinds
                continue
            depth = max(depth, part.depth)
            aliases += part.aliases
            cost += part.cost
        return Measure(depth, aliases, cost)

    def fragment(self, name: str, page: int | None) -> Measure:
        # Memoised per page size: one fragment on MemoryConnection may be spread into
        # connections of different `first`.
        key = (name, page)
        if key not in self.memo:
            self.memo[key] = Measure()  # a cycle (refused by validation anyway) stops here
            definition = self.fragments.get(name)
            if definition is not None:
                kind = self.schema.get_type(definition.type_condition.name.value)
                self.memo[key] = self.selections(definition.selection_set, kind, page)
        return self.memo[key]

    def field(self, node: FieldNode, parent: GraphQLNamedType | None,
              page: int | None = None) -> Measure:
        name = node.name.value
        if name.startswith("__"):
            return Measure()
        definition = (parent.fields.get(name)
                      if isinstance(parent, GraphQLObjectType) else None)
        child_type = get_named_type(definition.type) if definition else None
        is_list = (definition is not None
                   and isinstance(get_nullable_type(definition.type), GraphQLList))
        unsized = None if is_list else UNSIZED_PAGE.get(getattr(child_type, "name", ""))
        # A list argument sizes a list, or the pages of a holder (a merge's `ids`).
        size = self.size(node, is_list or unsized is not None)
        if unsized is not None:
            # One connection or summary: its size is spent on its pages alone.
            inner = self.selections(node.selection_set, child_type, page=size or unsized)
            multiplier = 1
        else:
            inner = self.selections(node.selection_set, child_type)
            multiplier = self.multiplier((getattr(parent, "name", None), name), size,
                                         is_list, page)
        return Measure(depth=1 + inner.depth,
                       aliases=(1 if node.alias else 0) + inner.aliases,
                       cost=1 + multiplier * inner.cost)

    @staticmethod
    def multiplier(key: tuple[str | None, str], size: int | None, is_list: bool,
                   page: int | None) -> int:
        """How many times a field's selections count (the table above)."""
        if not is_list:
            return size or 1
        if key in PAGES:
            return page or DEFAULT_LIST_SIZE
        if size is not None:
            return size
        return 1 if key in LOADED_WITH_PARENT else DEFAULT_LIST_SIZE

    def size(self, node: FieldNode, is_list: bool) -> int | None:
        """The size the field's arguments give: `first` / `limit` / `last`, an input's
        `limit`, or for a list (or a holder of PAGES) the length of a list argument
        (`inputs`, `ids`)."""
        arguments = {a.name.value: a.value for a in node.arguments or ()}
        for key in SIZE_ARGUMENTS:
            if key in arguments and (size := _size(self.value(arguments[key]))) is not None:
                return size
        for value in arguments.values():
            resolved = self.value(value)
            if isinstance(resolved, Mapping) and (size := _size(resolved.get("limit"))):
                return size
            if isinstance(resolved, list) and is_list:
                return max(1, len(resolved))
        return None

    def value(self, node: ValueNode) -> Any:
        """The argument's value as far as sizing needs it (ints, lists, objects)."""
        if isinstance(node, VariableNode):
            return self.variables.get(node.name.value)
        if isinstance(node, IntValueNode):
            return int(node.value)
        if isinstance(node, ListValueNode):
            return list(node.values)
        if isinstance(node, ObjectValueNode):
            return {f.name.value: self.value(f.value) for f in node.fields}
        return None


def measure(schema: GraphQLSchema, document: Any, operation_name: str | None,
            variables: Mapping[str, Any] | None) -> Measure:
    """Depth, aliases and cost of the operation that `operation_name` picks."""
    fragments = {d.name.value: d for d in document.definitions
                 if isinstance(d, FragmentDefinitionNode)}
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [o for o in operations
              if operation_name is None or (o.name and o.name.value == operation_name)]
    walker = _Walker(schema, fragments, variables or {})
    result = Measure()
    for operation in chosen[:1]:
        root = schema.get_root_type(operation.operation)
        result = walker.selections(operation.selection_set, root)
    return result


class QueryLimits(SchemaExtension):
    """Refuses an operation over the depth, alias or cost limit before it executes."""

    def __init__(self, limits: LimitsSettings) -> None:
        self.limits = limits

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is not None and context.result is None:
            found = measure(context.schema._schema, context.graphql_document,
                            context.operation_name, context.variables)
            problem = self.problem(found)
            error: MemlatticeError | None = None
            if problem is not None:
                error = TooComplex(problem, depth=found.depth, aliases=found.aliases,
                                   cost=found.cost)
            else:
                error = charged(context.context, found.cost)
            if error is not None:
                if context.operation_type is OperationType.SUBSCRIPTION:
                    # Strawberry subscribes whatever `result` says; an exception
                    # from this hook is what stops a subscription before it starts.
                    raise error
                context.result = ExecutionResult(
                    data=None, errors=[GraphQLError(error.message, original_error=error)])
        yield

    def problem(self, found: Measure) -> str | None:
        limits = self.limits
        if found.depth > limits.max_depth:
            return f"the query is {found.depth} levels deep; at most {limits.max_depth} allowed"
        if found.aliases > limits.max_aliases:
            return f"the query uses {found.aliases} aliases; at most {limits.max_aliases} allowed"
        if found.cost > limits.max_cost:
            return (f"the query's estimated cost is {found.cost}; at most {limits.max_cost}"
                    " allowed (lower `first`/`limit` or select fewer fields)")
        return None


def charged(context: object, cost: int) -> RateLimited | None:
    """Charge the operation's cost to the caller's key (memlattice.core.fairness), or
    the RATE_LIMITED error when its cost budget cannot pay it now."""
    gate = getattr(context, "gate", None)
    principal = getattr(context, "principal", None)
    if gate is None or principal is None or getattr(principal, "anonymous", True):
        return None
    refusal = gate.charge(principal, cost)
    if refusal is None:
        return None
    return RateLimited(refusal.message, limit=refusal.limit.value,
                       retryAfter=int(refusal.retry_after_header))


def limit_extensions(limits: LimitsSettings, *,
                     introspection: bool) -> list[Callable[[], SchemaExtension]]:
    """Extension factories for a schema that enforces `limits` (one instance per request)."""
    factories: list[Callable[[], SchemaExtension]] = [
        lambda: MaxTokensLimiter(max_token_count=limits.max_tokens),
        lambda: QueryLimits(limits),
    ]
    if not introspection:
        factories.append(DisableIntrospection)
    return factories
