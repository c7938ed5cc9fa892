"""Cypher clauses that keep a memory's history (graph.history): the revision a
change leaves behind, the state as of a time, and the time an edit records.
"""

from __future__ import annotations

REVISION = "MemoryRevision"


# Properties of a memory its revisions do not copy: identity (kept as `memoryId`),
# the vector, the fulltext fence tokens (derived), transient locks.
_NOT_COPIED = ("id", "embedding", "nsToken", "scopeToken", "`_lock`")


def snapshot(var: str = "m", *, until: str = "$now", imports: str = "", when: str = "") -> str:
    """Cypher: copy `var`'s current state into a revision that ended at `until`.

    Goes right before the clause that changes `var` in place, so the copy is made
    in the same transaction. It takes `var`'s write lock first (callers that have
    not already), so what it copies is the latest commit, the very state the
    change replaces. MERGE on (memoryId, version) keeps one revision per version
    even after an import rolled a memory back to a version whose revision exists
    already. `imports`: more variables `until` or `when` need (`, row`); `when`: a
    condition on them, to snapshot only some rows.
    """
    # A null in the map leaves the property out: the vector is never copied.
    state = f"{var} {{.*, " + ", ".join(f"{p}: null" for p in _NOT_COPIED) + "}"
    return (
        f"CALL ({var}{imports}) {{\n"
        + (f"  WITH * WHERE {when}\n" if when else "")
        + f"  SET {var}.`_lock` = true REMOVE {var}.`_lock`\n"
        f"  MERGE (rev:{REVISION} {{memoryId: {var}.id, version: {var}.version}})\n"
        f"  SET rev = {state}, rev.memoryId = {var}.id, rev.recordedFrom = {var}.updatedAt,"
        f" rev.recordedUntil = {monotonic(var, until)}\n"
        f"  MERGE ({var})-[:HAS_REVISION]->(rev) }}\n"
    )


def monotonic(var: str = "m", now: str = "$now") -> str:
    """`now`, or `var`'s `updatedAt` if that is later: a writer that took its time
    before a concurrent one but its lock after it must not end a version before the
    version began. The time an in-place edit gives `updatedAt`."""
    return f"CASE WHEN {now} > {var}.updatedAt THEN {now} ELSE {var}.updatedAt END"


def state_at(var: str = "m", state: str = "m_then") -> str:
    """Cypher: bind `state` to the node holding `var`'s state at `$asOf`: the
    revision of lowest version that was still current after `$asOf`, else `var`."""
    return (
        f"CALL ({var}) {{ OPTIONAL MATCH ({var})-[:HAS_REVISION]->(rev:{REVISION})"
        f" WHERE rev.recordedUntil > $asOf AND rev.version < {var}.version\n"
        f"  WITH rev ORDER BY rev.version LIMIT 1 RETURN coalesce(rev, {var}) AS {state} }}\n"
    )
