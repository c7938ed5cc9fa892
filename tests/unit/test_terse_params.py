"""Parameters handed to the driver print short but carry the same values."""

from __future__ import annotations

from memlattice.graph.client import terse


def test_lists_and_maps_keep_their_values_and_print_short() -> None:
    vector = [0.25] * 384
    rows = [{"embedding": vector, "content": "x"}] * 1000
    props = {"embedding": vector, "id": "m1"}
    params = {"vector": vector, "rows": rows, "props": props, "limit": 10, "ns": "a/b",
              "none": None}
    out = terse(params)
    assert out == params
    assert isinstance(out["vector"], list) and isinstance(out["props"], dict)
    assert out["limit"] == 10 and out["ns"] == "a/b" and out["none"] is None
    assert repr(out["vector"]) == "<list of 384>"
    assert repr(out["rows"]) == "<list of 1000>"
    assert repr(out["props"]) == "<map of 2>"
    assert len(repr(out)) < 200
