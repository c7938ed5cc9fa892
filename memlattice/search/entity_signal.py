"""The entity signal of recall: how many of the entities a query names a
candidate is about.

A question that names someone or something ("What did Melanie paint?") is
about the memories tied to that entity in the graph: the turns Melanie spoke
(`SPOKEN_BY`) and the memories that mention her (`MENTIONS`). Words alone
weigh that poorly: a name is one term among several, and within one person's
memories it is on nearly every memory, so BM25 gives it little weight
exactly where it decides most.

Which words of a query are entities is for the graph to say: every word run
of the query (memlattice.core.entities.query_keys) is looked up among the
keys of the entities the candidates are about, so lower-case questions and
names of several words work alike, and a word that is nobody's name in this
memory counts for nothing.

The signal is a count per candidate; fusion standardises it over the pool
(memlattice.search.fusion) like the other signals, so it speaks in proportion
to how much it separates this query's candidates: a name on every candidate
says nothing, one on a few says much. When the query names no entity any
candidate is about, there is no signal at all.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from memlattice.core.entities import query_keys


def named_entities(query: str, candidate_keys: Iterable[Iterable[str]]) -> frozenset[str]:
    """The keys of the entities `query` names, among those the candidates are about."""
    known: set[str] = set()
    for keys in candidate_keys:
        known.update(keys)
    return frozenset(query_keys(query) & known) if known else frozenset()


def entity_signal(named: frozenset[str],
                  about: Mapping[str, Iterable[str]]) -> dict[str, float | None] | None:
    """Per candidate id, how many of the `named` entities it is about; None when the
    query names none (fusion then leaves the signal out)."""
    if not named:
        return None
    return {id: float(len(named.intersection(keys))) for id, keys in about.items()}
