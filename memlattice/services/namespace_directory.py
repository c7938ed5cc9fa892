"""The namespaces a caller may see, for a namespace picker (the explorer's).

A key's namespace patterns (`team/alice`, `team/*`, `*`) become exact names and
prefixes for the query, so a limited key is never shown another tenant's
namespace names; the result is checked against the key once more on the way out.
"""

from __future__ import annotations

from memlattice.core.auth import Principal
from memlattice.core.errors import Unauthenticated, ValidationError
from memlattice.graph.namespace_listing import NamespaceListGraph

MAX_NAMESPACES = 1000


def key_bounds(principal: Principal) -> tuple[bool, list[str], list[str]]:
    """(everything, exact names, prefixes) a principal's namespace patterns allow."""
    if principal.namespaces is None or "*" in principal.namespaces:
        return True, [], []
    exact = sorted(p for p in principal.namespaces if not p.endswith("/*"))
    prefixes = sorted(p[:-1] for p in principal.namespaces if p.endswith("/*"))
    return False, exact, prefixes


class NamespaceDirectory:
    def __init__(self, graph: NamespaceListGraph) -> None:
        self.graph = graph

    async def visible(self, principal: Principal, *, prefix: str | None = None,
                      limit: int = 200) -> list[str]:
        """Namespaces holding memories that `principal` may read, in name order;
        raises UNAUTHENTICATED for a caller without a key where keys are required."""
        if principal.anonymous:
            raise Unauthenticated("send an API key: `Authorization: Bearer mlk_...`")
        if not 1 <= limit <= MAX_NAMESPACES:
            raise ValidationError(f"limit must be between 1 and {MAX_NAMESPACES}",
                                  field="limit")
        everything, exact, prefixes = key_bounds(principal)
        names = await self.graph.names(everything=everything, exact=exact, prefixes=prefixes,
                                       starting_with=prefix or "", limit=limit)
        return [name for name in names if principal.may_access(name)]
