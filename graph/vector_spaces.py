"""Side vector spaces in the graph: their indexes, their build state, their vectors.

A namespace that searches with another embedding model than the primary one
keeps one `(:MemoryVector {key, space, namespace, scopeKey, v_<slug>})` per
memory, joined by `EMBEDS`. Namespace and scope bucket never change after a
memory is written, so they are copied onto the vector and filtered inside the
index; status and the rest of a filter are read from the memory itself.

The build state is one `(:VectorSpaceState {namespace})` node. Progress is
never counted in a field: what is missing is asked of the graph, so a build
resumes after a crash or on another replica without bookkeeping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlattice.core.auth import Tenant
from memlattice.core.settings import VectorIndexSettings
from memlattice.core.vector_spaces import BuildStatus, SpaceState, VectorSpace
from memlattice.graph.client import GraphClient, Query
from memlattice.graph.visibility import allowed, unrestricted


def vector_key(memory_id: str, space: VectorSpace) -> str:
    return f"{memory_id}|{space.key}"


def create_index(space: VectorSpace, index: VectorIndexSettings) -> Query:
    # Names are derived from a hash-suffixed slug of [a-z0-9_] only, so they are
    # safe to splice; Cypher cannot take index names or property keys as parameters.
    return (
        f"CYPHER 25 CREATE VECTOR INDEX `{space.index}` IF NOT EXISTS"
        f" FOR (v:MemoryVector) ON v.`{space.vector_property}`\n"
        "WITH [v.namespace, v.scopeKey]\n"
        "OPTIONS {indexConfig: {`vector.dimensions`: " + str(int(space.dimension)) + ","
        " `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,"
        f" `vector.default_search_expansion_factor`: {float(index.search_expansion)},"
        f" `vector.hnsw.m`: {int(index.hnsw_m)},"
        f" `vector.hnsw.ef_construction`: {int(index.hnsw_ef_construction)}}}}}",
        {},
    )


def _space_fields(prefix: str, space: VectorSpace | None) -> dict[str, Any]:
    return {f"{prefix}Model": space.model if space else None,
            f"{prefix}Dimension": space.dimension if space else None}


def _space(props: Mapping[str, Any], prefix: str) -> VectorSpace | None:
    model = props.get(f"{prefix}Model")
    return VectorSpace(str(model), int(props[f"{prefix}Dimension"])) if model else None


def _state(namespace: str, props: Mapping[str, Any] | None) -> SpaceState:
    if props is None:
        return SpaceState.primary(namespace)
    updated: Any = props.get("updatedAt")  # a neo4j DateTime (or a datetime)
    return SpaceState(
        namespace=namespace, active=_space(props, "active"), target=_space(props, "target"),
        status=BuildStatus(props.get("status", "ready")), error=props.get("error"),
        updated_at=updated.to_native() if hasattr(updated, "to_native") else updated,
    )


@dataclass(frozen=True)
class Progress:
    embedded: int
    total: int


class VectorSpaceGraph:
    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def ensure_index(self, space: VectorSpace, index: VectorIndexSettings) -> None:
        await self.client.write(create_index(space, index))
        await self.client.write(("CALL db.awaitIndex($name, 300)", {"name": space.index}))

    async def state(self, namespace: str) -> SpaceState:
        records = await self.client.read((
            "CYPHER 25 MATCH (s:VectorSpaceState {namespace: $namespace}) RETURN s {.*} AS s",
            {"namespace": namespace}))
        return _state(namespace, records[0]["s"] if records else None)

    async def building(self) -> list[SpaceState]:
        records = await self.client.read((
            "CYPHER 25 MATCH (s:VectorSpaceState {status: 'building'})"
            " RETURN s {.*} AS s ORDER BY s.updatedAt", {}))
        return [_state(r["s"]["namespace"], r["s"]) for r in records]

    async def serving_side_spaces(self) -> list[SpaceState]:
        records = await self.client.read((
            "CYPHER 25 MATCH (s:VectorSpaceState) WHERE s.activeModel IS NOT NULL"
            " RETURN s {.*} AS s", {}))
        return [_state(r["s"]["namespace"], r["s"]) for r in records]

    async def set_target(self, namespace: str, target: VectorSpace | None,
                         now: datetime) -> tuple[SpaceState, list[VectorSpace]]:
        """Aim the namespace at `target` (None = the primary space).

        The primary space and a space already active need no build: the switch
        is immediate. Anything else starts a build, and the active space keeps
        serving until it is done. Returns the new state and the side spaces it
        no longer uses (their vectors can go).
        """
        records = await self.client.write((
            "CYPHER 25 MERGE (s:VectorSpaceState {namespace: $namespace})\n"
            "SET s.`_lock` = true REMOVE s.`_lock`\n"
            "WITH s, [[s.activeModel, s.activeDimension], [s.targetModel, s.targetDimension]]"
            " AS old,\n"
            "  ($targetModel IS NULL OR (coalesce(s.activeModel, '') = $targetModel\n"
            "   AND coalesce(s.activeDimension, 0) = $targetDimension)) AS immediate\n"
            "SET s.activeModel = CASE WHEN immediate THEN $targetModel ELSE s.activeModel END,\n"
            "    s.activeDimension = CASE WHEN immediate THEN $targetDimension"
            " ELSE s.activeDimension END,\n"
            "    s.targetModel = CASE WHEN immediate THEN null ELSE $targetModel END,\n"
            "    s.targetDimension = CASE WHEN immediate THEN null ELSE $targetDimension END,\n"
            "    s.status = CASE WHEN immediate THEN 'ready' ELSE 'building' END,\n"
            "    s.error = null, s.updatedAt = $now\n"
            "RETURN s {.*} AS s, old",
            {"namespace": namespace, "now": now, **_space_fields("target", target)}))
        record = records[0]
        state = _state(namespace, record["s"])
        unused = {VectorSpace(model, int(dimension)) for model, dimension in record["old"]
                  if model} - set(state.side_spaces)
        return state, sorted(unused, key=lambda space: space.key)

    async def fail(self, namespace: str, target: VectorSpace, error: str, now: datetime) -> None:
        await self.client.write((
            "CYPHER 25 MATCH (s:VectorSpaceState {namespace: $namespace})\n"
            "WHERE s.targetModel = $targetModel AND s.targetDimension = $targetDimension\n"
            "SET s.status = 'failed', s.error = $error, s.updatedAt = $now",
            {"namespace": namespace, "error": error[:1000], "now": now,
             **_space_fields("target", target)}))

    async def missing(self, namespace: str, space: VectorSpace,
                      limit: int) -> list[tuple[str, str, str | None]]:
        """(id, content, metadataJson) of memories without a vector in `space`, oldest
        first: what is embedded for a memory depends on both
        (memlattice.core.embedding_text)."""
        records = await self.client.read((
            "CYPHER 25 MATCH (m:Memory {namespace: $namespace})\n"
            "WHERE NOT EXISTS { (m)<-[:EMBEDS]-(:MemoryVector {space: $space}) }\n"
            "RETURN m.id AS id, coalesce(m.content, '') AS content,"
            " m.metadataJson AS metadata\n"
            "ORDER BY m.createdAt, m.id LIMIT $limit",
            {"namespace": namespace, "space": space.key, "limit": limit}))
        return [(r["id"], r["content"], r["metadata"]) for r in records]

    async def put(self, namespace: str, space: VectorSpace,
                  rows: Sequence[tuple[str, str, list[float]]]) -> int:
        """Store vectors computed from `(id, content, vector)`; a row whose memory's
        content changed meanwhile is skipped (the writer of that change embeds it)."""
        if not rows:
            return 0
        records = await self.client.write((
            "CYPHER 25 UNWIND $rows AS row\n"
            "MATCH (m:Memory {id: row.id}) WHERE m.namespace = $namespace"
            " AND coalesce(m.content, '') = row.content\n"
            "MERGE (v:MemoryVector {key: row.id + '|' + $space})\n"
            "ON CREATE SET v.space = $space, v.namespace = m.namespace,"
            " v.scopeKey = m.scopeKey, v.memoryId = m.id\n"
            f"SET v.`{space.vector_property}` = row.vector\n"
            "MERGE (v)-[:EMBEDS]->(m)\n"
            "RETURN count(*) AS stored",
            {"namespace": namespace, "space": space.key,
             "rows": [{"id": i, "content": c, "vector": v} for i, c, v in rows]}))
        return int(records[0]["stored"])

    async def activate(self, namespace: str, target: VectorSpace,
                       now: datetime) -> VectorSpace | None | bool:
        """Switch search to `target` if it is still the target and nothing is missing.

        Returns False when it could not switch, else the space it replaced
        (None when that was the primary one).
        """
        records = await self.client.write((
            "CYPHER 25 MATCH (s:VectorSpaceState {namespace: $namespace})\n"
            "WHERE s.targetModel = $targetModel AND s.targetDimension = $targetDimension\n"
            "SET s.`_lock` = true REMOVE s.`_lock`\n"
            "WITH s WHERE s.targetModel = $targetModel\n"
            "  AND NOT EXISTS { MATCH (m:Memory {namespace: $namespace})\n"
            "    WHERE NOT EXISTS { (m)<-[:EMBEDS]-(:MemoryVector {space: $space}) } }\n"
            "WITH s, s.activeModel AS oldModel, s.activeDimension AS oldDimension\n"
            "SET s.activeModel = s.targetModel, s.activeDimension = s.targetDimension,\n"
            "    s.targetModel = null, s.targetDimension = null, s.status = 'ready',\n"
            "    s.updatedAt = $now, s.finishedAt = $now\n"
            "RETURN oldModel, oldDimension",
            {"namespace": namespace, "space": target.key, "now": now,
             **_space_fields("target", target)}))
        if not records:
            return False
        old = records[0]
        return VectorSpace(old["oldModel"], int(old["oldDimension"])) if old["oldModel"] else None

    async def drop_vectors(self, namespace: str, space: VectorSpace, batch: int = 5000) -> int:
        """Remove a namespace's vectors of a space it no longer uses, in batches."""
        removed = 0
        while True:
            records = await self.client.write((
                "CYPHER 25 MATCH (v:MemoryVector {space: $space}) WHERE v.namespace = $namespace\n"
                "WITH v LIMIT $batch DETACH DELETE v RETURN count(*) AS n",
                {"namespace": namespace, "space": space.key, "batch": batch}))
            n = int(records[0]["n"])
            removed += n
            if n < batch:
                return removed

    async def progress(self, namespace: str, space: VectorSpace | None,
                       tenant: Tenant | None = None) -> Progress:
        """How many memories `space` (None: the primary) holds a vector of, of how many;
        with `tenant`, only the memories within its clearance and scopes count (a
        count of the others would reveal that they exist)."""
        records = await self.client.read((
            f"CYPHER 25 MATCH (m:Memory {{namespace: $namespace}}) WHERE {allowed('m')}\n"
            "RETURN count(m) AS total, CASE WHEN $space IS NULL THEN count(m.embedding)\n"
            "  ELSE count(CASE WHEN EXISTS { (m)<-[:EMBEDS]-(:MemoryVector {space: $space}) }"
            " THEN 1 END) END AS embedded",
            {**(tenant.params() if tenant is not None else unrestricted()),
             "namespace": namespace, "space": space.key if space else None}))
        return Progress(embedded=int(records[0]["embedded"]), total=int(records[0]["total"]))
