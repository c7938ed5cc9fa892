"""A stored memory's duplicate identity as a Cypher condition (core.duplicates.DuplicateIdentity).

Shared by the deduplicating write (graph.duplicates) and the check of explicit
ids (graph.explicit_ids), so both agree on what "the same memory" means.
"""

from __future__ import annotations

# A stored memory `m` has the identity `row` names (every comparison null-safe);
# the content hash is compared by each caller (one seeks by it, the other by id).
SAME_IDENTITY = " AND ".join(
    [f"((m.{p} IS NULL AND row.{p} IS NULL) OR m.{p} = row.{p})"
     for p in ("scope", "agentId", "userId", "sessionId", "taskId", "key")]
    + ["coalesce(m.sensitivity, 'low') = row.sensitivity",
       "coalesce(m.memoryType, 'note') = row.memoryType"])
