"""An update link as the graph holds it: `(newer)-[:UPDATES]->(older)`, a candidate
until someone confirms or rejects it (graph.updates.store writes and decides them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlattice.graph.codec import Memory, to_datetime


@dataclass(frozen=True)
class UpdateLink:
    """`newer` states another value of an attribute `older` stated: a candidate
    until someone confirms (the older one is then SUPERSEDED) or rejects it."""

    id: str
    kind: str
    status: str
    confidence: float
    reason: str
    subject: str
    attribute: str
    matched: tuple[str, ...]
    created_at: datetime | None
    newer: Memory | None = None
    older: Memory | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    note: str | None = None
    # Who stated it (proposeUpdate, the update judge; None: the rule set found it), and
    # who judged the rule set's candidate wrong (recall then ignores it until confirmed).
    proposed_by: str | None = None
    disputed_by: str | None = None


def link_from(props: Any, newer: Memory | None = None,
              older: Memory | None = None) -> UpdateLink:
    return UpdateLink(
        id=str(props["id"]), kind=str(props["kind"]), status=str(props["status"]),
        confidence=float(props["confidence"]), reason=str(props["reason"]),
        subject=str(props["subject"]), attribute=str(props["attribute"]),
        matched=tuple(props.get("matched") or ()), created_at=to_datetime(props.get("createdAt")),
        newer=newer, older=older, decided_at=to_datetime(props.get("decidedAt")),
        decided_by=props.get("decidedBy"), note=props.get("note"),
        proposed_by=props.get("proposedBy"), disputed_by=props.get("disputedBy"))
