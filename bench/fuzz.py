"""Schemathesis fuzzing of a live GraphQL endpoint: no 5xx, no INTERNAL, no crash.

Schemathesis reads the schema from the running server (introspection) and
generates operations for every root field, with arguments drawn from their
types; our custom scalars get strategies of their own (vectors of the wrong
length as well as the right one, JSON of any shape, nested past the JSON
limit and past the document limit), and so do the edges of the built-in ones:
DateTimes at and beyond the supported range (`0001-01-01T00:00:00+14:00`),
Floats up to 1e308 (search weights, half-lives, boosts), Strings that are
cursors naming impossible times. Every answer must be a 200 with data or
coded errors: a 5xx, an `INTERNAL` code or a dead server is a failure.

`fuzz_ids` runs a fixed catalogue of writes that name ids (taken, retried,
other content, another namespace, twice in a batch, malformed), each of which
must get its documented answer, the refused ones writing nothing.

`fuzz_bodies` posts raw request bodies besides (JSON that is not a request
object, deep JSON, bytes that are not UTF-8, odd content types and methods):
each must be refused with a coded JSON error below 500.

    .venv/bin/python -m bench.fuzz                  # private Neo4j + server, 200 per field
    .venv/bin/python -m bench.fuzz --examples 1000 --url http://127.0.0.1:8000

The test suite runs the same `fuzz` with few examples (tests/integration/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta, timezone
from typing import Any

import schemathesis
from graphql import (
    BooleanValueNode,
    FloatValueNode,
    IntValueNode,
    ListValueNode,
    NullValueNode,
    ObjectFieldNode,
    ObjectValueNode,
    StringValueNode,
    ValueNode,
)
from graphql.language import NameNode
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from memlattice.core.nesting import MAX_JSON_DEPTH, MAX_REQUEST_DEPTH

DIMENSION = 256
# The ends of the supported range (memlattice.core.times) and the instants just past them.
EDGE_TIMES = ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z",
              "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00",
              "9999-12-31T24:00:00", "0001-01-01T09:59:59.999999+10:00")
HUGE_FLOATS = (1e308, -1e308, 1.7976931348623157e308, 5e-324, 1e-320, 1e16, 1001.0)


def _float(x: float) -> ValueNode:
    return FloatValueNode(value=repr(float(x)))


def _nested_list(levels: int) -> ValueNode:
    node: ValueNode = IntValueNode(value="1")
    for _ in range(levels):
        node = ListValueNode(values=(node,))
    return node


def _json_node() -> st.SearchStrategy[ValueNode]:
    """Any shape, sometimes nested just past the JSON limit or past the document's."""
    deep = st.sampled_from([MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, MAX_REQUEST_DEPTH + 1]
                           ).map(_nested_list)
    return st.one_of(_shallow_json_node(), deep)


def _shallow_json_node() -> st.SearchStrategy[ValueNode]:
    scalars: st.SearchStrategy[ValueNode] = st.one_of(
        st.text(max_size=20).map(lambda s: StringValueNode(value=s)),
        st.integers(-10**6, 10**6).map(lambda i: IntValueNode(value=str(i))),
        st.floats(allow_nan=False, allow_infinity=False, width=32).map(_float),
        st.booleans().map(lambda b: BooleanValueNode(value=b)),
        st.just(NullValueNode()),
    )
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda v: ListValueNode(values=tuple(v))),
        st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), inner,
                        max_size=4).map(lambda d: ObjectValueNode(fields=tuple(
                            ObjectFieldNode(name=NameNode(value=k), value=v)
                            for k, v in d.items())))), max_leaves=12)


def _vector_node() -> st.SearchStrategy[ValueNode]:
    finite = st.floats(-1, 1, allow_nan=False, width=32)
    right = st.lists(finite, min_size=DIMENSION, max_size=DIMENSION)
    wrong = st.lists(finite, max_size=8)
    return st.one_of(right, wrong).map(
        lambda v: ListValueNode(values=tuple(_float(x) for x in v)))


def _cursor(stamp: str) -> str:
    """A pagination cursor as the API encodes one, naming `stamp`."""
    return base64.urlsafe_b64encode(json.dumps([stamp, "x"]).encode()).decode()


def _string_node() -> st.SearchStrategy[ValueNode]:
    """Any text, but often a valid namespace: random text alone stops at VALIDATION;
    sometimes a cursor naming an instant at or past the edge of the range."""
    return st.one_of(st.sampled_from(["fuzz/a", "fuzz/b/c", "fuzz"]), st.text(max_size=40),
                     st.sampled_from(EDGE_TIMES).map(_cursor)
                     ).map(lambda s: StringValueNode(value=s))


def _datetime_node() -> st.SearchStrategy[ValueNode]:
    """Ordinary instants with any offset, and the edges of the supported range."""
    offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
    ordinary = st.datetimes(timezones=offsets).map(lambda d: d.isoformat())
    return st.one_of(st.sampled_from(EDGE_TIMES), ordinary
                     ).map(lambda s: StringValueNode(value=s))


def _float_node() -> st.SearchStrategy[ValueNode]:
    """Ordinary floats, and ones large or small enough to overflow careless arithmetic."""
    return st.one_of(st.floats(-2, 2, allow_nan=False), st.sampled_from(HUGE_FLOATS)
                     ).map(_float)


def register_scalars() -> None:
    schemathesis.graphql.scalar("JSON", _json_node())
    schemathesis.graphql.scalar("Vector", _vector_node())
    schemathesis.graphql.scalar("String", _string_node())
    schemathesis.graphql.scalar("DateTime", _datetime_node())
    schemathesis.graphql.scalar("Float", _float_node())


@dataclass
class FuzzReport:
    cases: int = 0
    answered: int = 0  # with data and no error
    by_field: Counter[str] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def fuzz(base_url: str, *, examples: int, headers: dict[str, str] | None = None,
         seed: int | None = None) -> FuzzReport:
    """Send `examples` generated operations per root field; collect every bad answer."""
    register_scalars()
    schema = schemathesis.graphql.from_url(base_url.rstrip("/") + "/graphql",
                                           headers=headers or {}, timeout=30)
    report = FuzzReport()
    started = time.monotonic()
    for result in schema.get_all_operations():
        _fuzz_operation(result.ok(), base_url, examples=examples, headers=headers, seed=seed,
                        report=report)
    report.seconds = time.monotonic() - started
    return report


def _fuzz_operation(operation: Any, base_url: str, *, examples: int,
                    headers: dict[str, str] | None, seed: int | None,
                    report: FuzzReport) -> None:
    label = operation.label

    @settings(max_examples=examples, deadline=None, database=None,
              derandomize=seed is not None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy())
    def send(case: Any) -> None:
        response = case.call(base_url=base_url, headers=headers, timeout=60)
        report.cases += 1
        report.by_field[label] += 1
        report.statuses[response.status_code] += 1
        try:
            body = json.loads(response.content)
        except ValueError:
            body = None
        errors = (body.get("errors") or []) if isinstance(body, dict) else []
        codes = [str((e.get("extensions") or {}).get("code")) for e in errors]
        report.codes.update(codes)
        report.answered += not codes and isinstance(body, dict) and bool(body.get("data"))
        if response.status_code >= 500 or "INTERNAL" in codes or body is None:
            report.failures.append({"field": label, "query": case.body,
                                    "status": response.status_code,
                                    "body": response.content[:2000].decode(errors="replace")})

    send()


def _raw_body() -> st.SearchStrategy[bytes]:
    """Bodies a client should not send: JSON of any kind, deep JSON, requests with
    fields of the wrong types, batches of anything, bytes that are not UTF-8."""
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
        | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=10)
    fields = st.fixed_dictionaries({}, optional={
        "query": st.one_of(st.just("{ __typename }"), json_values),
        "variables": json_values, "operationName": json_values, "extensions": json_values})
    deep = st.integers(MAX_REQUEST_DEPTH - 2, 3000).map(
        lambda n: ('{"query": "{ __typename }", "variables": {"x": ' + "[" * n + "]" * n
                   + "}}"))
    return st.one_of(
        json_values.map(json.dumps), fields.map(json.dumps),
        st.lists(fields, max_size=3).map(json.dumps), deep,
    ).map(str.encode) | st.binary(max_size=64)


def fuzz_bodies(base_url: str, *, examples: int, headers: dict[str, str] | None = None,
                seed: int | None = None) -> FuzzReport:
    """Post `examples` malformed requests; a 5xx, a body that is not JSON or an error
    without a code is a failure."""
    import httpx

    report = FuzzReport()
    started = time.monotonic()
    content_types = st.sampled_from(["application/json", "application/json; charset=utf-8",
                                     "text/plain", "application/x-www-form-urlencoded",
                                     "multipart/form-data; boundary=x", ""])
    methods = st.sampled_from(["POST", "POST", "POST", "PUT", "PATCH", "DELETE"])

    with httpx.Client(base_url=base_url, headers=headers or {}, timeout=60) as http:
        @settings(max_examples=examples, deadline=None, database=None,
                  derandomize=seed is not None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(body=_raw_body(), content_type=content_types, method=methods)
        def send(body: bytes, content_type: str, method: str) -> None:
            response = http.request(method, "/graphql", content=body,
                                    headers={"content-type": content_type})
            report.cases += 1
            report.by_field["(raw body)"] += 1
            report.statuses[response.status_code] += 1
            try:
                answer = json.loads(response.content)
            except ValueError:
                answer = None
            errors = (answer.get("errors") or []) if isinstance(answer, dict) else []
            codes = [str((e.get("extensions") or {}).get("code")) for e in errors]
            report.codes.update(codes)
            if (response.status_code >= 500 or not isinstance(answer, dict)
                    or "INTERNAL" in codes or "None" in codes
                    or (response.status_code != 200 and not codes)):
                report.failures.append({"field": "(raw body)", "method": method,
                                        "content_type": content_type,
                                        "body": body[:300].decode(errors="replace"),
                                        "status": response.status_code,
                                        "answer": response.content[:500].decode(
                                            errors="replace")})

        send()
    report.seconds = time.monotonic() - started
    return report


ID_FIELDS = "id written duplicateOf content"
_WRITE = ("mutation($input: MemoryInput!) { writeMemory(input: $input) { " + ID_FIELDS
          + " } }")
_WRITE_MANY = ("mutation($inputs: [MemoryInput!]!) { writeMemories(inputs: $inputs) { "
               + ID_FIELDS + " } }")
_WRITE_RECORD = ("mutation($input: RecordInput!) { writeRecord(input: $input) { created"
                 " record { memory { id } } } }")
_SUPERSEDE = ("mutation($id: ID!, $memory: MemoryInput!) { supersedeMemory(id: $id,"
              " memory: $memory) { current { id } } }")
_COUNT = ("query($ns: String!) { memories(filter: {namespace: $ns, statuses: [ACTIVE,"
          " SUPERSEDED]}, first: 1) { totalCount } }")


@dataclass(frozen=True)
class IdCase:
    """One write of the id catalogue: what it sends, and what must come back
    (`expect`: an error code, or the `written` of each result, in order)."""

    name: str
    query: str
    variables: dict[str, Any]
    expect: str | tuple[str, ...]


def id_cases(namespace: str, other: str, tag: str) -> list[IdCase]:
    """Writes that name ids (docs/api.md, "Ids mean what they say"), in order: each
    builds on the ones before. `tag` makes the ids this run's own."""
    a, b, c, d = (f"{tag}-{name}" for name in "abcd")

    def memory(content: str, id: str | None = None, ns: str = namespace,
               **extra: Any) -> dict[str, Any]:
        return {"namespace": ns, "content": content, "embedding": [0.5] * DIMENSION,
                **({"id": id} if id is not None else {}), **extra}

    def one(name: str, input: dict[str, Any], expect: str | tuple[str, ...]) -> IdCase:
        return IdCase(name, _WRITE, {"input": input}, expect)

    def many(name: str, inputs: list[dict[str, Any]], expect: str | tuple[str, ...]) -> IdCase:
        return IdCase(name, _WRITE_MANY, {"inputs": inputs}, expect)

    record = {"namespace": namespace, "type": "SEMANTIC", "id": a, "payload": {
        "subject": "x", "predicate": "is", "object": "y", "validity": {"kind": "global"}}}
    return [
        one("new id", memory("the sky is blue", a), ("CREATED",)),
        one("same id, same content", memory("The sky is blue.", a), ("UNCHANGED",)),
        one("same id, same content, allowDuplicate", memory("the sky is blue", a,
                                                            allowDuplicate=True),
            ("UNCHANGED",)),
        one("same id, other content", memory("the sky is green", a), "CONFLICT"),
        one("same id, other scope", memory("the sky is blue", a, scope="USER",
                                           userId="u1"), "CONFLICT"),
        one("same id, other namespace", memory("the sky is blue", a, ns=other), "CONFLICT"),
        one("new id, content already stored", memory("the sky is blue", b), ("CREATED",)),
        one("no id, content held by two", memory("the sky is blue"), ("REINFORCED",)),
        many("one id twice in a batch", [memory("grass is green", c),
                                         memory("grass is green", c)], "CONFLICT"),
        many("a taken id after a new one", [memory("snow is white", d),
                                            memory("snow is cold", a)], "CONFLICT"),
        many("same content with and without an id", [memory("rain is wet"),
                                                     memory("rain is wet", c)],
             ("REINFORCED", "CREATED")),
        one("empty id", memory("empty", ""), "VALIDATION"),
        one("id over 128 characters", memory("long", "x" * 129), "VALIDATION"),
        one("unicode id", memory("unicode", f"{tag}-\u00fc\u4e2d"), ("CREATED",)),
        one("id with an invisible character", memory("hidden", f"{tag}-\u200b"),
            "VALIDATION"),
        IdCase("a record on a memory's id", _WRITE_RECORD, {"input": record}, "CONFLICT"),
        IdCase("a successor on a taken id", _SUPERSEDE, {
            "id": b, "memory": memory("the sky was blue", c)}, "CONFLICT"),
    ]


# Memories the catalogue leaves in its namespace: a, b, c and the unicode id.
ID_CATALOGUE_MEMORIES = 4


def fuzz_ids(base_url: str, *, headers: dict[str, str] | None = None) -> FuzzReport:
    """Run the id catalogue against a server: each case must answer as `id_cases` says,
    never a 5xx or INTERNAL, and the refused ones write nothing (counted at the end)."""
    import uuid

    import httpx

    tag = uuid.uuid4().hex[:8]
    namespace, other = f"fuzz/ids-{tag}", f"fuzz/ids-{tag}-other"
    report = FuzzReport()
    started = time.monotonic()
    with httpx.Client(base_url=base_url, headers=headers or {}, timeout=60) as http:
        for case in id_cases(namespace, other, tag):
            response = http.post("/graphql", json={"query": case.query,
                                                   "variables": case.variables})
            report.cases += 1
            report.by_field["(ids) " + case.name] += 1
            report.statuses[response.status_code] += 1
            body = response.json()
            errors = body.get("errors") or []
            codes = [str((e.get("extensions") or {}).get("code")) for e in errors]
            report.codes.update(codes)
            if isinstance(case.expect, str):
                got: str | tuple[str, ...] = codes[0] if codes else "no error"
            elif errors:
                got = codes[0]
            else:
                (result,) = body["data"].values()
                results = result if isinstance(result, list) else [result]
                got = tuple(str(r.get("written")) for r in results)
                report.answered += 1
            if got != case.expect or response.status_code >= 500:
                report.failures.append({"case": case.name, "expected": case.expect,
                                        "got": got, "status": response.status_code,
                                        "body": response.text[:1000]})
        for ns, expected in ((namespace, ID_CATALOGUE_MEMORIES), (other, 0)):
            count = http.post("/graphql", json={"query": _COUNT, "variables": {"ns": ns}}
                              ).json()["data"]["memories"]["totalCount"]
            if count != expected:
                report.failures.append({"case": "what the catalogue left", "namespace": ns,
                                        "expected": expected, "got": count})
    report.seconds = time.monotonic() - started
    return report


def print_report(report: FuzzReport) -> None:
    print(f"# {report.cases} operations over {len(report.by_field)} root fields"
          f" in {report.seconds:.1f}s")
    print(f"# answered without error: {report.answered}")
    print(f"# HTTP statuses: {dict(report.statuses)}")
    print(f"# error codes:   {dict(report.codes.most_common())}")
    print(f"# failures:      {len(report.failures)}")
    for failure in report.failures[:10]:
        print(json.dumps(failure)[:1500])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=200, help="per root field")
    parser.add_argument("--url", help="a running server (otherwise one is started)")
    args = parser.parse_args()
    if args.url:
        report = fuzz(args.url, examples=args.examples)
        bodies = fuzz_bodies(args.url, examples=args.examples)
        ids = fuzz_ids(args.url)
    else:
        from bench._server import served

        with served() as server:
            report = fuzz(server.base, examples=args.examples)
            bodies = fuzz_bodies(server.base, examples=args.examples)
            ids = fuzz_ids(server.base)
    print_report(report)
    print_report(bodies)
    print_report(ids)
    raise SystemExit(1 if report.failures or bodies.failures or ids.failures else 0)


if __name__ == "__main__":
    main()
