"""Schemathesis fuzzing of a live GraphQL endpoint: no 5xx, no INTERNAL, no crash.

Schemathesis reads the schema from the running server (introspection) and
generates operations for every root field, with arguments drawn from their
types; our custom scalars get strategies of their own (vectors of the wrong
length as well as the right one, JSON of any shape). Every answer must be a
200 with data or coded errors: a 5xx, an `INTERNAL` code or a dead server is
a failure.

    .venv/bin/python -m bench.fuzz                  # private Neo4j + server, 200 per field
    .venv/bin/python -m bench.fuzz --examples 1000 --url http://127.0.0.1:8000

The test suite runs the same `fuzz` with few examples (tests/integration/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import dataclass, field
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

DIMENSION = 256


def _float(x: float) -> ValueNode:
    return FloatValueNode(value=repr(float(x)))


def _json_node() -> st.SearchStrategy[ValueNode]:
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


def _string_node() -> st.SearchStrategy[ValueNode]:
    """Any text, but often a valid namespace: random text alone stops at VALIDATION."""
    return st.one_of(st.sampled_from(["fuzz/a", "fuzz/b/c", "fuzz"]), st.text(max_size=40)
                     ).map(lambda s: StringValueNode(value=s))


def register_scalars() -> None:
    schemathesis.graphql.scalar("JSON", _json_node())
    schemathesis.graphql.scalar("Vector", _vector_node())
    schemathesis.graphql.scalar("String", _string_node())


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
    else:
        from bench._server import served

        with served() as server:
            report = fuzz(server.base, examples=args.examples)
    print_report(report)
    raise SystemExit(1 if report.failures else 0)


if __name__ == "__main__":
    main()
