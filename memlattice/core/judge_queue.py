"""What the update judge's durable queue keeps about a memory waiting to be judged,
and how long it waits after a failure (pure, no I/O).

A write's new memories used to be judged from memory: a model that was down or
answered garbage, a full backlog or a restart meant they were never judged. Now
they are marked in the graph in the write's own transaction (graph.judge_queue)
and a loop judges what is marked (services.judge_queue). A mark outlives the
request that made it, so it must carry what judging needs of that request: the
writer's view (namespace, clearance, broadest scope: the offers the model is
shown are those the writer's key could see, never more) and the actor the links
are audited to. `WriterView.tenant` rebuilds exactly that view; it cannot widen it,
because the only inputs are the ones `WriterView.of` took from the writer's tenant.

Retrying: a model that is down is asked again later, later each time (doubling
from `first_s` up to `max_s`), for as long as it takes; an answer that is not the
JSON asked for is tried `max_malformed` times, then the memory is given up (a
prompt that makes the model answer garbage would do it again forever).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memlattice.core.auth import Principal, Tenant
from memlattice.core.model import Scope, Sensitivity

# The source type of the facts the write-side model extracts from a session
# (services.session_facts): never judged, the model reconciled them as it wrote them.
MODEL_FACTS = "session_facts"


@dataclass(frozen=True)
class WriterView:
    """Who wrote a memory and what their key could see, as stored with its mark."""

    namespace: str
    clearance: Sensitivity
    # The broadest scope level the key may read (`agent`: every level and unscoped).
    max_scope: Scope
    principal: str
    actor: str

    @classmethod
    def of(cls, tenant: Tenant, actor: str) -> WriterView:
        """The view of `tenant` (the writer's, as the write authorised it)."""
        top = Scope.AGENT if tenant.scopes is None else Scope(tenant.scopes[-1])
        return cls(namespace=tenant.namespace, clearance=tenant.clearance, max_scope=top,
                   principal=tenant.principal, actor=actor)

    def tenant(self) -> Tenant:
        """The writer's tenant again: the same namespace, clearance and scope levels
        (writable: the links the model's verdicts make are writes on its behalf)."""
        writer = Principal(key_id=None, name=self.principal,
                           namespaces=frozenset({self.namespace}), max_scope=self.max_scope,
                           clearance=self.clearance, can_write=True)
        return writer.tenant(self.namespace, write=True)

    def properties(self) -> dict[str, str]:
        """What the mark stores (graph.judge_queue)."""
        return {"clearance": self.clearance.value, "scope": self.max_scope.value,
                "principal": self.principal, "actor": self.actor}

    @classmethod
    def stored(cls, namespace: str, props: dict[str, str]) -> WriterView:
        """The view `properties` stored; a value that is no longer a known clearance or
        scope raises ValueError (then the memory is not judged: see services.judge_queue)."""
        return cls(namespace=namespace, clearance=Sensitivity(props["clearance"]),
                   max_scope=Scope(props["scope"]), principal=props["principal"],
                   actor=props["actor"])


@dataclass(frozen=True)
class Waiting:
    """A memory marked for judging, as the queue hands it out."""

    id: str
    content: str
    at: datetime | None
    view: WriterView
    failures: int  # times its judging failed so far (model down, or garbage)
    malformed: int  # of which the model answered no replaces JSON


@dataclass(frozen=True)
class Retrying:
    """How the queue retries: the first wait, the longest, and how many garbage
    answers a memory gets before it is given up."""

    first_s: float
    max_s: float
    max_malformed: int

    def delay_s(self, failures: int) -> float:
        """The wait after the `failures`-th failure (1: `first_s`), doubling, at most
        `max_s`."""
        if failures <= 1:
            return min(self.first_s, self.max_s)
        return min(self.max_s, self.first_s * 2.0 ** min(failures - 1, 62))

    def gives_up(self, malformed: int) -> bool:
        """Whether a memory answered garbage about `malformed` times is given up."""
        return malformed >= self.max_malformed


def by_writer(waiting: list[Waiting]) -> list[tuple[WriterView, list[Waiting]]]:
    """`waiting` grouped by writer view, in first-seen order: one prompt never mixes
    what different keys could see (each group is judged as its writer)."""
    groups: dict[WriterView, list[Waiting]] = {}
    for item in waiting:
        groups.setdefault(item.view, []).append(item)
    return list(groups.items())
