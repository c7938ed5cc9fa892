"""Re-bucketing stored memories after scope buckets learned their path.

A memory's `scopeKey` names its visibility bucket (`memlattice.core.model.bucket_key`).
Buckets of sessions and tasks used to be their bare id (`session:s1`,
`task:t1`), so a search in the chain of another user's session s1 (or task t1)
read them too. They now carry the ids above them (`session:u1/s1`,
`task:u1/s1/t1`). This data step (migration 12) rewrites the keys written
before: the memories', their side-space vectors' (`MemoryVector.scopeKey`,
which side indexes filter on) and their revisions' (as-of searches test the
state then), plus each memory's fulltext fence token, `scopeToken`, whose
SHA-256 Cypher cannot compute, hence Python. Every pass only touches keys that
differ from what they should be, so it is safe to run again.
"""

from __future__ import annotations

from memlattice.graph.client import GraphClient
from memlattice.graph.codec import search_token

BATCH = 5000
_LEVELS = "['session', 'task']"


def _part(prop: str) -> str:
    """Cypher for `memlattice.core.model._path_part` of `m.<prop>`."""
    return f"replace(replace(coalesce(m.{prop}, ''), '%', '%25'), '/', '%2F')"


# Cypher for `memlattice.core.model.bucket_key` of a session or task memory `m`.
EXPECTED_KEY = (
    "CASE m.scope"
    f" WHEN 'session' THEN 'session:' + {_part('userId')} + '/' + {_part('sessionId')}"
    f" WHEN 'task' THEN 'task:' + {_part('userId')} + '/' + {_part('sessionId')} + '/'"
    f" + {_part('taskId')} END"
)


async def rebucket(client: GraphClient, batch: int = BATCH, *,
                   namespace: str | None = None) -> int:
    """Rewrite every stale session and task bucket (of one `namespace`, or all);
    returns how many memories moved."""
    where = f"m.scope IN {_LEVELS} AND ($namespace IS NULL OR m.namespace = $namespace)"
    stale = (f"CYPHER 25 MATCH (m:Memory) WHERE {where}\n"
             f"WITH m, {EXPECTED_KEY} AS key WHERE coalesce(m.scopeKey, '') <> key\n"
             "RETURN m.id AS id, key LIMIT $batch")
    move = ("CYPHER 25 UNWIND $rows AS row MATCH (m:Memory {id: row.id})\n"
            "SET m.scopeKey = row.key, m.scopeToken = row.token")
    vectors = (f"CYPHER 25 MATCH (m:Memory)<-[:EMBEDS]-(v:MemoryVector) WHERE {where}"
               " AND coalesce(v.scopeKey, '') <> m.scopeKey SET v.scopeKey = m.scopeKey")
    revisions = (f"CYPHER 25 MATCH (m:Memory)-[:HAS_REVISION]->(r:MemoryRevision) WHERE {where}"
                 " AND coalesce(r.scopeKey, '') <> m.scopeKey SET r.scopeKey = m.scopeKey")
    moved = 0
    while True:
        rows = await client.read((stale, {"batch": batch, "namespace": namespace}))
        if not rows:
            break
        await client.write((move, {"rows": [
            {"id": r["id"], "key": r["key"], "token": search_token(r["key"])} for r in rows]}))
        moved += len(rows)
    await client.write((vectors, {"namespace": namespace}))
    await client.write((revisions, {"namespace": namespace}))
    return moved
