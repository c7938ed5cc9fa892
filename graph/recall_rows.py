"""The rows of one recall round trip (graph.recall_query), read into typed candidates.

Candidates keep their raw property maps: most are ranked and dropped, so only
the hits a search returns become `Memory` objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memlattice.graph.codec import Memory, exists, memory_from_properties
from memlattice.graph.entities import keys_of


class _Row:
    """What every recall row says of its memory, read from its property map."""

    props: Mapping[str, Any]

    @property
    def id(self) -> str:
        return str(self.props["id"])

    @property
    def embedding(self) -> list[float] | None:
        """Present only when the search asked for vectors (MMR)."""
        return self.props.get("embedding")


@dataclass(frozen=True)
class Found(_Row):
    """A candidate from one index, with its raw index score.

    It keeps the raw property map: most candidates are ranked and dropped, so
    only the hits that are returned become `Memory` objects.
    """

    props: Mapping[str, Any]
    score: float
    # The cosine to the query of a lexical candidate, when the search asked for it.
    similarity: float | None = None
    # (hops away, content) of its neighbours along NEXT, when the search asked for them.
    context: tuple[tuple[int, str], ...] = ()
    # The keys of the entities it is about (graph.entities), when the search asked.
    entities: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reached(_Row):
    """A memory reached from candidate `seed` along `path` ((type, source, target) steps)."""

    seed: str
    props: Mapping[str, Any]
    similarity: float | None
    path: tuple[tuple[str, str, str], ...]
    context: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class NewerState:
    """A memory that updates a candidate (graph.updates): `hops` links away, the first
    link on the way (`link`), and its properties."""

    hops: int
    link: Mapping[str, Any]
    props: Mapping[str, Any]


@dataclass(frozen=True)
class SearchResult:
    semantic: list[Found] = field(default_factory=list)
    lexical: list[Found] = field(default_factory=list)
    # The NEXT neighbours of both lists' candidates (no index score of their own).
    adjacent: list[Found] = field(default_factory=list)
    reached: list[Reached] = field(default_factory=list)
    conflicts: dict[str, list[Memory]] = field(default_factory=dict)
    # The memories that update a candidate, by the candidate's id (graph.updates).
    newer: dict[str, list[NewerState]] = field(default_factory=dict)


def _context(row: Mapping[str, Any],
             texts: Mapping[str, str]) -> tuple[tuple[int, str], ...]:
    """A row's neighbours as (hops away, content): named by element id, their words
    sent once for the whole query (graph.recall_plan.RecallPlan.context_by_id), or
    carried in the row itself. A neighbour deleted meanwhile lends nothing."""
    out = []
    for c in row.get("context") or ():
        content = c["content"] if "content" in c else texts.get(c["eid"])
        if content is not None:
            out.append((int(c["hop"]), str(content)))
    return tuple(out)


def search_result(record: Mapping[str, Any]) -> SearchResult:
    """The candidates of a recall record: each index's list, the NEXT neighbours, what
    expansion reached, and the CONTRADICTS neighbours the caller may see of each."""
    keys = set(record.keys())
    # Each row carries the CONTRADICTS neighbours its caller may see.
    conflicts: dict[str, list[Memory]] = {}

    newer: dict[str, list[NewerState]] = {}

    def note_conflicts(x: Mapping[str, Any]) -> None:
        for n in x.get("newer") or ():
            if not exists(n["m"]):
                continue
            listed = newer.setdefault(x["m"]["id"], [])
            if all(s.props["id"] != n["m"]["id"] for s in listed):
                listed.append(NewerState(int(n["hops"]), n["link"], n["m"]))
        if not x["conflicts"]:
            return  # the common case
        seen = conflicts.setdefault(x["m"]["id"], [])
        known = {m.id for m in seen}
        for c in x["conflicts"]:
            if exists(c) and c["id"] not in known:
                seen.append(memory_from_properties(c))
                known.add(c["id"])

    # What every row is, by element id: a lexical row of a memory the vector side
    # found too is its fulltext score only, and a row's neighbours are named by id.
    by_eid: dict[str, Mapping[str, Any]] = {}
    for key in ("semantic", "lexical", "adjacent"):
        for x in record.get(key) or () if key in keys else ():
            if x.get("m") is not None:
                by_eid.setdefault(x["eid"], x)
    texts: dict[str, str] = {eid: str(x["m"].get("content") or "") for eid, x in by_eid.items()}
    for entry in record["expanded"] if "expanded" in keys else ():
        for x in entry["reached"]:
            if exists(x["m"]):
                texts.setdefault(x["eid"], str(x["m"].get("content") or ""))
    if "contextTexts" in keys:
        texts.update((c["eid"], str(c["content"] or "")) for c in record["contextTexts"])

    def found(key: str) -> list[Found]:
        if key not in keys:
            return []
        out = []
        for x in record[key]:
            if x.get("seen"):
                # Found by the vector side too: that row holds the memory; its score
                # there is the cosine a lexical row would have carried.
                same = by_eid.get(x["eid"])
                if same is None or not exists(same["m"]):
                    continue
                out.append(Found(same["m"], float(x.get("score") or 0.0),
                                 similarity=same.get("score"), context=_context(same, texts),
                                 entities=keys_of(same)))
                continue
            if not exists(x["m"]):
                continue
            note_conflicts(x)
            out.append(Found(x["m"], float(x.get("score") or 0.0), similarity=x.get("similarity"),
                             context=_context(x, texts), entities=keys_of(x)))
        return out

    reached: list[Reached] = []
    if "expanded" in keys:
        for entry in record["expanded"]:
            for x in entry["reached"]:
                # A node or relationship deleted by a concurrent commit reads as nulls.
                if not exists(x["m"]) or any(step["type"] is None for step in x["path"]):
                    continue
                note_conflicts(x)
                reached.append(Reached(
                    seed=entry["seed"], props=x["m"],
                    similarity=x["similarity"],
                    path=tuple((step["type"], step["source"], step["target"])
                               for step in x["path"]),
                    context=_context(x, texts),
                ))
    semantic, lexical = found("semantic"), found("lexical")
    return SearchResult(semantic=semantic, lexical=lexical, adjacent=found("adjacent"),
                        reached=reached,
                        conflicts={k: sorted(v, key=lambda m: m.id)
                                   for k, v in conflicts.items() if v}, newer=newer)
