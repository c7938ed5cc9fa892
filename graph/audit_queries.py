"""The audit trail: the CREATE clause every audited write appends, and the read
of a memory's trail with the ids its reader may not see.
"""

from __future__ import annotations

from memlattice.core.auth import Tenant
from memlattice.graph.client import Query
from memlattice.graph.visibility import allowed

_AUDIT = (
    "CREATE (:AuditEntry {{id: {id}, memoryId: {memory}, namespace: $namespace,"
    " operation: {op}, actor: $actor, at: {at}, version: {version}, detailsJson: {details}"
    "{extra}}})"
)


def audit_entry(
    id: str, memory: str, op: str, version: str, details: str = "null", at: str = "$now",
    extra: str = "",
) -> str:
    """A CREATE clause for one audit entry; every argument is a Cypher expression
    (`extra`: more `key: expression` pairs)."""
    return _AUDIT.format(id=id, memory=memory, op=op, version=version, details=details, at=at,
                         extra=f", {extra}" if extra else "")


def hidden(expr: str) -> str:
    """Cypher: whether the memory id `expr` names one of the namespace that the tenant
    may not see: a live memory outside `allowed`, or an erased one whose `delete`
    entry recorded a sensitivity or scope outside it."""
    return (
        f"(EXISTS {{ MATCH (h:Memory {{id: {expr}}}) WHERE h.namespace = $namespace"
        f" AND NOT ({allowed('h')}) }}"
        f" OR (NOT EXISTS {{ MATCH (h:Memory {{id: {expr}}}) WHERE h.namespace = $namespace }}"
        f" AND EXISTS {{ MATCH (h:AuditEntry {{memoryId: {expr}}})"
        f" WHERE h.namespace = $namespace AND h.operation = 'delete'"
        f" AND NOT ({allowed('h')}) }}))"
    )


def audit_trail(*, tenant: Tenant, id: str) -> Query:
    """A memory's trail, if the tenant may see the memory: the live node decides, and
    once it is deleted, the sensitivity and scope its `delete` entry recorded.

    Each entry comes with `hidden`: the ids its details name (a linked target, a
    successor, a predecessor, a merge...) that the tenant may not see, for the
    reader to redact (`graph.codec.audit_from_properties`). Details are JSON text,
    which Cypher cannot parse; every JSON string is a part between two quotes, so
    splitting on `"` offers each one to an index look-up (escaped quotes inside an
    id would defeat this; ids are checked whole)."""
    query = (
        "CYPHER 25\n"
        "OPTIONAL MATCH (m:Memory {id: $id}) WHERE m.namespace = $namespace\n"
        "MATCH (a:AuditEntry {memoryId: $id}) WHERE a.namespace = $namespace\n"
        "WITH m, collect(a) AS entries\n"
        f"WHERE CASE WHEN m IS NOT NULL THEN {allowed('m')}\n"
        "  ELSE all(d IN [e IN entries WHERE e.operation = 'delete'] WHERE"
        f" {allowed('d')}) END\n"
        "UNWIND entries AS a\n"
        "RETURN a {.*} AS a,\n"
        "  [t IN split(coalesce(a.detailsJson, ''), '\"') WHERE t <> $id AND size(t) > 0"
        f" AND {hidden('t')}] AS hidden\n"
        "ORDER BY a.at, coalesce(a.version, 0), a.id"
    )
    return query, {**tenant.params(), "id": id}
