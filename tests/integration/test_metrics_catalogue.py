"""The metrics table of docs/operating.md against a fresh process's first scrape (issue 30).

An operator's dashboards and alerts (`rate(x[5m])`, `absent(x)`) need each
documented series before its first increment: a labelled counter used to be
missing from /metrics until something counted it (`memlattice_update_judge_
answers_total` on a server whose judge never failed, every error code until its
first error). Here, on an app that has served nothing yet:

- the table names every metric family the scrape holds, and the scrape holds
  every metric the table names;
- a metric without labels has its one series;
- a label the table gives values for has exactly those values' series (a
  counter's at 0), so the table and the code cannot drift apart;
- a label given without values (`key`, `query`, ...) is open-ended: no series
  of it is required, and none carries a label the table does not name.
"""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from memlattice.core.settings import Settings
from tests.integration._apps import app_with

DOC = Path(__file__).resolve().parents[2] / "docs" / "operating.md"
_ROW = re.compile(r"^\| `(memlattice_\w+)` \| ([^|]*) \|")
_LABEL = re.compile(r"`(\w+)`(?::\s*((?:`\w+`(?:,\s*)?)+))?")


def documented() -> dict[str, dict[str, set[str] | None]]:
    """The table's metrics: each one's labels, with their values where it lists them."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Health and metrics"):text.index("## Logs")]
    table: dict[str, dict[str, set[str] | None]] = {}
    for line in section.splitlines():
        row = _ROW.match(line)
        if row is None:
            continue
        labels: dict[str, set[str] | None] = {}
        for label in _LABEL.finditer(row.group(2)):
            values = label.group(2)
            labels[label.group(1)] = (set(re.findall(r"`(\w+)`", values))
                                      if values else None)
        table[row.group(1)] = labels
    return table


def test_the_table_is_read_as_it_is_written() -> None:
    table = documented()
    assert len(table) >= 13
    assert table["memlattice_requests_in_flight"] == {}
    assert table["memlattice_rate_limited_total"] == {"key": None, "limit": None}
    assert table["memlattice_update_judge_answers_total"]["outcome"] == {
        "answered", "malformed", "model_error", "linked", "refused", "disputed",
        "retried", "abandoned"}


async def test_a_fresh_process_shows_every_documented_series(settings: Settings) -> None:
    table = documented()
    async with app_with(settings) as http:
        response = await http.get("/metrics")
    assert response.status_code == 200
    # prometheus_client's `_created` timestamps parse as families of their own.
    families = {(f"{f.name}_total" if f.type == "counter" else f.name): f
                for f in text_string_to_metric_families(response.text)
                if not f.name.endswith("_created")}
    assert set(families) == set(table), (
        f"scraped, not documented: {sorted(set(families) - set(table))};"
        f" documented, not scraped: {sorted(set(table) - set(families))}")

    for name, labels in table.items():
        family = families[name]
        series = [s for s in family.samples
                  if s.name == name or (family.type == "histogram"
                                        and s.name == f"{name}_count")]
        for sample in series:
            assert set(sample.labels) <= set(labels), (name, sample.labels)
        if not labels:
            assert [s.labels for s in series] == [{}], name
            continue
        for label, values in labels.items():
            if values is None:
                continue  # open-ended: a value's series appears when it occurs
            found = {s.labels[label]: s.value for s in series}
            assert set(found) == values, (
                f"{name}{{{label}}}: scraped {sorted(found)}, documented {sorted(values)}")
            if family.type == "counter":
                assert set(found.values()) == {0.0}, (name, found)
