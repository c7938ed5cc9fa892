"""The depth / alias / cost measure of resolvers.limits, on the real schema."""

from __future__ import annotations

import time
from typing import Any

from graphql import GraphQLList, GraphQLObjectType, get_named_type, get_nullable_type, parse

from memlattice.core.settings import FairnessSettings
from memlattice.graph.cursors import DEFAULT_PAGE
from memlattice.resolvers.knowledge_types import SummaryWindowInput
from memlattice.resolvers.limits import (
    DEFAULT_LIST_SIZE,
    LOADED_WITH_PARENT,
    PAGES,
    UNSIZED_PAGE,
    measure,
    read_from_parent,
)
from memlattice.resolvers.schema import schema

GRAPHQL = schema._schema


def measured(document: str, variables: dict[str, object] | None = None,
             operation: str | None = None) -> tuple[int, int, int]:
    found = measure(GRAPHQL, parse(document), operation, variables)
    return found.depth, found.aliases, found.cost


def test_flat_query() -> None:
    assert measured("{ __typename }") == (0, 0, 0)  # introspection is not counted
    assert measured('{ memory(namespace: "a", id: "b") { id content } }') == (2, 0, 3)


def test_connection_cost_follows_first_literal_and_variable() -> None:
    query = ("query($n: Int!) { memories(filter: {namespace: \"a\"}, first: $n)"
             " { edges { node { id } } } }")
    # memories: 1 + edges; edges is the page `first` sized: 1 + n * (node: 1 + 1)
    assert measured(query, {"n": 5}) == (4, 0, 1 + 1 + 5 * 2)
    assert measured(query, {"n": 100})[2] == 1 + 1 + 100 * 2
    literal = query.replace("query($n: Int!) ", "").replace("$n", "7")
    assert measured(literal)[2] == 1 + 1 + 7 * 2


def test_a_connections_count_and_page_info_count_once() -> None:
    """One connection of `first` memories: its totalCount and pageInfo (4 units) were
    counted once per memory, so a page of 50 ids and contents cost 401, not 156."""
    query = ('query { memories(filter: {namespace: "a"}, first: 50) { totalCount'
             " pageInfo { hasNextPage endCursor } edges { node { id content } } } }")
    assert measured(query)[2] == 1 + 1 + 3 + (1 + 50 * (1 + 2))
    # Without `first` (or `last`), the server's page of 50.
    unsized = query.replace(", first: 50", "")
    assert measured(unsized)[2] == measured(query)[2]
    assert UNSIZED_PAGE["MemoryConnection"] == DEFAULT_PAGE


def test_a_summary_is_one_summary_of_limit_memories() -> None:
    """`summarize(window: {limit: n})` builds one summary of at most n bullets from at
    most n memories: it was priced as n summaries of ten memories each."""
    query = ('query { summarize(namespace: "a", window: {limit: 2})'
             " { text bullets { text memoryId } memories { id content } } }")
    assert measured(query)[2] == 1 + 1 + (1 + 2 * 2) + (1 + 2 * 2)
    # The window's default (10 memories) when none is given.
    unsized = query.replace(", window: {limit: 2}", "")
    assert measured(unsized)[2] == 1 + 1 + 2 * (1 + 10 * 2)
    assert UNSIZED_PAGE["Summary"] == SummaryWindowInput().limit == 10
    # Pages are attributes their holder's resolver filled (no query of their own).
    for type_name, field in PAGES:
        assert read_from_parent(GRAPHQL.get_type(type_name).fields[field])  # type: ignore[union-attr]


def test_a_fragment_on_a_connection_follows_each_ones_first() -> None:
    query = """
    query { a: memories(filter: {namespace: "a"}, first: 3) { ...P }
            b: memories(filter: {namespace: "a"}, first: 30) { ...P } }
    fragment P on MemoryConnection { totalCount edges { node { id } } }
    """
    assert measured(query)[2] == (1 + 1 + (1 + 3 * 2)) + (1 + 1 + (1 + 30 * 2))


def test_other_lists_count_the_default_size() -> None:
    query = 'query { factsByEvidence(namespace: "a", ref: "r") { recordType } }'
    assert measured(query)[2] == 1 + DEFAULT_LIST_SIZE * 1
    write = ('mutation { storeFact(input: {namespace: "a", kind: "k", claim: "c"})'
             " { hints { kind memoryId } } }")
    assert measured(write)[2] == 1 + (1 + DEFAULT_LIST_SIZE * 2)


def test_a_records_lists_come_with_it() -> None:
    """A record's tool calls, plan nodes and edges and evidence are read by the query
    that reads the record, whatever is selected, and are its payload's own (which
    `payload`, 1, carries too): priced as pages of ten, a record selecting every
    field of them cost 217, three times the 73 it costs now."""
    query = ('query { record(namespace: "a", id: "r") { payload toolCalls { id tool }'
             " planNodes { id } planEdges { source target } evidence { kind ref } } }")
    assert measured(query)[2] == 1 + 1 + 3 + 2 + 3 + 3
    hits = ('query { recallFacts(filter: {namespace: "a"}, limit: 2)'
            " { score evidence { kind ref } fact { evidence { kind ref } } } }")
    assert measured(hits)[2] == 1 + 2 * (1 + 3 + (1 + 3))


def test_a_revision_holds_the_records_it_revised() -> None:
    """`previous` is the one record a supersede, fork or contest revised, or the
    records a merge retired, one per id: it was priced as ten records."""
    revised = " { record { recordType payload } previous { recordType payload } } }"
    supersede = ('mutation { supersedeRecord(namespace: "a", id: "r", record:'
                 ' {namespace: "a", type: SEMANTIC, payload: {}})' + revised)
    assert measured(supersede)[2] == 1 + 3 + (1 + 1 * 2)
    merge = ("mutation($ids: [ID!]!) { mergeRecords(namespace: \"a\", ids: $ids, into:"
             ' {namespace: "a", type: SEMANTIC, payload: {}})' + revised)
    assert measured(merge, {"ids": ["x", "y", "z"]})[2] == 1 + 3 + (1 + 3 * 2)
    literal = merge.replace("mutation($ids: [ID!]!)", "mutation").replace(
        "$ids", '["x", "y", "z", "w"]')
    assert measured(literal)[2] == 1 + 3 + (1 + 4 * 2)
    # The record itself counts once, whatever the size.
    assert UNSIZED_PAGE["RevisionResult"] == 1


# Lists without a resolver left priced as pages, and why (see resolvers.limits).
PRICED_AS_PAGES = {
    # As many as the conversation's messages.
    ("IngestedConversation", "memories"),
    # A write's candidates (graph.hints): up to MAX_TEXT_CANDIDATES and more.
    ("RecordWriteResult", "hints"), ("FactWriteResult", "hints"),
    # One per node label a wipe removed: about ten, as priced.
    ("NamespaceWipeResult", "byLabel"),
}


def test_every_list_read_with_its_parent_is_priced_on_purpose() -> None:
    """A list of objects without a resolver is a page its holder's size sizes, a few
    items loaded with its parent, or left priced as a page: a new one is a choice."""
    unplaced = set()
    for type_name, kind in GRAPHQL.type_map.items():
        if not isinstance(kind, GraphQLObjectType) or type_name.startswith("__"):
            continue
        for name, field in kind.fields.items():
            if (isinstance(get_nullable_type(field.type), GraphQLList)
                    and isinstance(get_named_type(field.type), GraphQLObjectType)
                    and read_from_parent(field)):
                unplaced.add((type_name, name))
    placed = PAGES | LOADED_WITH_PARENT | PRICED_AS_PAGES
    assert unplaced - placed == set()
    assert placed - unplaced == set()  # each named list still is one
    assert not (PAGES & LOADED_WITH_PARENT or PRICED_AS_PAGES & (PAGES | LOADED_WITH_PARENT))


def test_lists_loaded_with_their_hit_count_once() -> None:
    """A hit's conflicts come with the hit from the search's one query: priced as a
    page of ten, a hit selecting its conflicts' fields cost ten times its memory."""
    query = ('query { search(input: {filter: {namespace: "a"}, query: "x", limit: 2})'
             " { memory { id content } conflicts { id content } path { type } } }")
    assert measured(query)[2] == 1 + 2 * (3 + 3 + 2)
    # Each is a plain attribute of its parent (no resolver, no query of its own).
    for type_name, field in LOADED_WITH_PARENT:
        assert read_from_parent(GRAPHQL.get_type(type_name).fields[field])  # type: ignore[union-attr]


def test_the_python_clients_default_search_fits_a_rate_limited_keys_budget() -> None:
    """`MemlatticeClient.search(ns, query)` on a key limited to 5 requests a second
    (cost budget 5 x request_cost, bucket as much): it cost 10,151, twenty seconds
    of that budget, and the key's next calls were refused for a minute and a half."""
    from memlattice_client import _operations as ops

    request_cost = FairnessSettings().request_cost
    bucket = 5 * request_cost

    def cost(call: ops.Call[object]) -> int:
        return measure(GRAPHQL, parse(call.document), None, call.variables).cost

    default = cost(ops.search("ns", "cat"))
    assert default <= bucket  # admitted from a full bucket, never into debt
    # Every field is opt-in, and no longer priced as a hundred requests.
    assert default < cost(ops.search("ns", "cat", detail="full")) <= 20 * request_cost


def test_the_python_clients_default_listings_fit_a_rate_limited_keys_budget() -> None:
    """Its calls that return many memories selected every field of each (and of both
    memories of an update link): `memory_updates` cost 10,401, `memories` 2,501,
    `memory_history` 4,801. By default they now select what callers read, on pages
    of 20; `detail="full"` still asks for every field (tests/integration/test_client_costs)."""
    from memlattice_client import _operations as ops
    from memlattice_client import _updates as up

    bucket = 5 * FairnessSettings().request_cost

    def cost(call: ops.Call[object]) -> int:
        return measure(GRAPHQL, parse(call.document), None, call.variables).cost

    calls: dict[str, Any] = {
        "memories": lambda **kw: ops.memories("ns", **kw),
        "memory_history": lambda **kw: ops.memory_history("ns", "m", **kw),
        "summarize": lambda **kw: ops.summarize("ns", **kw),
        "memory_updates": lambda **kw: up.memory_updates("ns", **kw),
    }
    for name, build in calls.items():
        brief, full = cost(build()), cost(build(detail="full"))
        assert brief <= bucket, (name, brief)
        assert brief < full, (name, brief, full)


def test_the_python_clients_typed_record_calls_fit_a_rate_limited_keys_budget() -> None:
    """They selected every field of every record, whose lists were priced as pages:
    `records` cost 10,851, `recall_facts` 2,401, `facts_by_evidence` 2,171, a revision
    2,390. The listings now select each record but its memory's secondary fields (ten
    records by default), `detail="full"` every field; one record always comes whole."""
    import inspect

    from memlattice_client import AsyncMemlatticeClient, MemlatticeClient
    from memlattice_client import _knowledge as kn
    from memlattice_client import _operations as ops

    bucket = 5 * FairnessSettings().request_cost

    def cost(call: ops.Call[object]) -> int:
        return measure(GRAPHQL, parse(call.document), None, call.variables).cost

    listings: dict[str, Any] = {
        "records": lambda **kw: kn.records("ns", **kw),
        "recall_facts": lambda **kw: kn.recall_facts("ns", "q", **kw),
        "facts_by_evidence": lambda **kw: kn.facts_by_evidence("ns", "ref", **kw),
    }
    for name, build in listings.items():
        brief, full = cost(build()), cost(build(detail="full"))
        assert brief <= bucket, (name, brief)
        assert brief < full, (name, brief, full)
    whole = {
        "record": kn.record("ns", "r"), "retract_record": kn.retract_record("ns", "r"),
        "update_record": kn.update_record("ns", "r", "WORKING", {}),
        "write_record": kn.write_record("ns", "SEMANTIC", {}),
        "store_fact": kn.store_fact("ns", "k", "c"),
        "supersede_record": kn.supersede_record("ns", "r", "SEMANTIC", {}),
        "fork_record": kn.fork_record("ns", "r", "SEMANTIC", {}),
        "contest_record": kn.contest_record("ns", "r", "b"),
        "merge_records": kn.merge_records("ns", ["a", "b"], "SEMANTIC", {}),
    }
    for name, call in whole.items():
        assert cost(call) <= bucket, (name, cost(call))
    # iter_memories' pages too (each was 2,106 at 100 a page).
    for client in (MemlatticeClient, AsyncMemlatticeClient):
        size = inspect.signature(client.iter_memories).parameters["page_size"].default
        assert cost(ops.memories("ns", first=size)) <= bucket


def test_search_limit_inside_the_input_object() -> None:
    query = "query($in: SearchInput!) { search(input: $in) { memory { id content } } }"
    base = {"filter": {"namespace": "a"}, "query": "x"}
    assert measured(query, {"in": {**base, "limit": 3}})[2] == 1 + 3 * 3
    # Without a limit the list counts as the default size.
    assert measured(query, {"in": base})[2] == 1 + DEFAULT_LIST_SIZE * 3


def test_write_batches_count_their_inputs() -> None:
    query = "mutation($is: [MemoryInput!]!) { writeMemories(inputs: $is) { id } }"
    inputs = [{"namespace": "a", "content": "x"}] * 40
    assert measured(query, {"is": inputs})[2] == 1 + 40 * 1


def test_aliases_and_fragments() -> None:
    query = """
    query { a: memory(namespace: "n", id: "1") { ...F } b: memory(namespace: "n", id: "2") { ...F } }
    fragment F on Memory { x: id y: content }
    """
    depth, aliases, cost = measured(query)
    assert depth == 2
    assert aliases == 2 + 2 * 2  # each spread of F brings its two aliases
    assert cost == 2 * 3


def test_only_the_chosen_operation_counts() -> None:
    document = ('query A { memory(namespace: "n", id: "1") { id } }'
                ' query B { memories(filter: {namespace: "n"}) { totalCount } }')
    assert measured(document, operation="A") == (2, 0, 2)
    assert measured(document, operation="B") == (2, 0, 2)


def test_fragment_fan_out_is_measured_in_linear_time() -> None:
    """F0 spreads F1 twice, F1 spreads F2 twice, ...: 2**40 paths, 41 fragments."""
    fragments = [f"fragment F{i} on Memory {{ id ...F{i + 1} ...F{i + 1} }}" for i in range(40)]
    fragments.append("fragment F40 on Memory { id }")
    document = 'query { memory(namespace: "n", id: "1") { ...F0 } }\n' + "\n".join(fragments)
    started = time.perf_counter()
    depth, _, cost = measured(document)
    # Linear: milliseconds. Walking the 2**40 paths would never end, so a bound
    # generous enough for a busy machine still fails an exponential measure.
    assert time.perf_counter() - started < 10
    assert depth == 2
    assert cost > 2 ** 40  # the cost still reflects what executing it would do
