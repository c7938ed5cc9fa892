"""schema.graphql reads as documentation: graphql-schema-linter (from npm, pinned in
tests/schema_lint) finds no type, field, argument, input field or enum value without
a description, no uncapitalised description, and connections that follow the Relay
spec. The checked-in file is the live schema (test_schema_file.py), so this lints
what GraphiQL's docs pane and graphql-codegen show.

The findings for the description rules, by hand (after the test installed the linter):

    R=types-have-descriptions,fields-have-descriptions,arguments-have-descriptions
    R=$R,input-object-values-have-descriptions,enum-values-have-descriptions
    tests/schema_lint/node_modules/.bin/graphql-schema-linter --rules $R schema.graphql
"""

from __future__ import annotations

import json
from collections import Counter

from tests import _node

PROJECT = _node.ROOT / "tests" / "schema_lint"
RULES = (
    "types-have-descriptions", "fields-have-descriptions", "arguments-have-descriptions",
    "input-object-values-have-descriptions", "enum-values-have-descriptions",
    "descriptions-are-capitalized", "relay-connection-types-spec",
    "relay-connection-arguments-spec", "relay-page-info-spec",
)


def lint(*rules: str) -> list[dict[str, object]]:
    """graphql-schema-linter's findings over schema.graphql for `rules`."""
    _node.npm_ci(PROJECT)
    linter = PROJECT / "node_modules" / ".bin" / "graphql-schema-linter"
    done = _node.run([str(linter), "--format", "json", "--rules", ",".join(rules),
                      str(_node.ROOT / "schema.graphql")], cwd=PROJECT, check=False)
    # Exit 1 means "findings"; anything else (2: bad configuration) is the tool failing.
    assert done.returncode in (0, 1), done.stderr
    errors: list[dict[str, object]] = json.loads(done.stdout)["errors"]
    return errors


def test_every_part_of_the_schema_is_described_and_connections_follow_relay() -> None:
    findings = lint(*RULES)
    counts = Counter(str(f["rule"]) for f in findings)
    assert not findings, f"{dict(counts)}\n" + "\n".join(
        str(f["message"]) for f in findings[:40])


def test_the_linter_reports_what_it_finds() -> None:
    """The check can fail: a rule the schema does not follow (fields in alphabetical
    order; ours are in reading order) reports findings through the same command."""
    assert lint("type-fields-sorted-alphabetically")
