"""What memories mention: `(:Memory)-[:MENTIONS]->(:Entity {namespace, key})`.

Entities are per namespace and found by key (memlattice.core.entities: a name
folded for case, spacing and possessives); a conversation's speakers are
Entity nodes of the same kind of key (graph.conversations), so a turn that
mentions "Caroline" and the turns Caroline spoke meet on one node. Recall
reads a candidate's entity keys beside it (`entity_keys`), one pattern
comprehension per row, no extra round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memlattice.core.entities import mentions

# The relationships that tie a memory to an entity it is about.
ABOUT = "SPOKEN_BY|MENTIONS"


# Whether writes link salient noun phrases as entities beside names: the
# process's Settings.entity_phrases (MEMLATTICE_ENTITY_PHRASES), set once when the
# app is built. Off by default: on LoCoMo it cost recall (docs/recall.md).
_LINKING = {"phrases": False}


def link_noun_phrases(enabled: bool) -> None:
    """Turn the linking of noun phrases (memlattice.core.entities.noun_phrases) on or off
    for this process's writes from now on."""
    _LINKING["phrases"] = enabled


def mention_rows(content: str) -> list[dict[str, str]]:
    """The `{key, name, kind}` rows `link_mentions` merges for a memory's content."""
    return [{"key": m.key, "name": m.name, "kind": m.kind}
            for m in mentions(content, phrases=_LINKING["phrases"])]


def link_mentions(var: str = "m", rows: str = "row.mentions", carried: str | None = "row"
                  ) -> str:
    """A CALL block, inside a write, that merges each mentioned entity of `var`
    (rows `{key, name}` in `rows`, an expression over `carried` or a parameter)
    and the MENTIONS relationship to it:

        CALL (m, row) { UNWIND row.mentions AS mention
          MERGE (e:Entity {namespace: m.namespace, key: mention.key})
            ON CREATE SET e.name = mention.name, e.kind = 'name', e.createdAt = m.createdAt
          MERGE (m)-[:MENTIONS]->(e) }

    The (namespace, key) uniqueness constraint makes concurrent writes that
    mention one new name meet on one node.
    """
    scope = ", ".join([var] + ([carried] if carried else []))
    return (
        f"CALL ({scope}) {{\n"
        f"  UNWIND coalesce({rows}, []) AS mention\n"
        f"  MERGE (e:Entity {{namespace: {var}.namespace, key: mention.key}})\n"
        f"    ON CREATE SET e.name = mention.name, e.kind = coalesce(mention.kind, 'name'),"
        f" e.createdAt = {var}.createdAt\n"
        f"  MERGE ({var})-[:MENTIONS]->(e)\n"
        "}\n"
    )


def relink_mentions(var: str = "m", rows: str = "$mentions", carried: str | None = None
                    ) -> str:
    """CALL blocks, inside a write that changed `var`'s content, that replace its
    MENTIONS with those of the new content (rows `{key, name}` in `rows`, a
    parameter or an expression over `carried`; null leaves them as they are, for a
    write that kept the content).

    An entity no memory mentions any more stays: a speaker, a session or a
    concurrent write may hold it, and recall reads entities only from the
    memories that point at them, so it costs nothing there.
    """
    scope = ", ".join([var] + ([carried] if carried else []))
    return (
        f"CALL ({scope}) {{\n"
        f"  WITH {scope} WHERE {rows} IS NOT NULL\n"
        f"  MATCH ({var})-[old:MENTIONS]->(:Entity) DELETE old\n"
        "}\n"
        + link_mentions(var, rows, carried=carried)
    )


def entity_keys(var: str) -> str:
    """The keys of the entities `var` is about (spoken by or mentioning), as a row field:

        [(m)-[:SPOKEN_BY|MENTIONS]->(e:Entity) | e.key]
    """
    return f"[({var})-[:{ABOUT}]->(ent:Entity) | ent.key]"


def keys_of(row: Any) -> tuple[str, ...]:
    """The entity keys a recall row carries (none when the query did not ask)."""
    found: Sequence[Any] | None = row.get("entities")
    if not found:
        return ()  # most rows: no generator for an empty list, a hundred times a search
    return tuple(str(k) for k in found)
