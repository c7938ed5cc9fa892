"""Which memories a search's updated candidates are outdated by, and which links a
question asks about (the service side of memlattice.search.currency): read from
the newer states the recall query brings with each candidate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memlattice.core.embedding_text import speaker_in_json
from memlattice.graph.codec import Memory, memory_from_properties
from memlattice.graph.recall_rows import NewerState
from memlattice.graph.updates.links import UpdateLink, link_from
from memlattice.search.currency import asks_about, asks_for, names


def current_states(newer: Mapping[str, Sequence[NewerState]]) -> dict[str, str]:
    """Each outdated candidate's newest state (the latest written of those that
    update it)."""
    return {old: str(max(states, key=lambda x: (x.props.get("createdAt") or 0,
                                               str(x.props["id"]))).props["id"])
            for old, states in newer.items() if states}


def asked_about(newer: Mapping[str, Sequence[NewerState]], query: str | None) -> set[str]:
    """The outdated candidates whose links the query asks about: it names a word a link
    matched on, or it names the newer memory's speaker and asks for the kind of value
    the link changed (memlattice.search.currency). Only their newest states may enter
    a list the search did not put them in. A link a writer stated (proposeUpdate) is
    not a guess the question must bear out: its newest state may always take the
    outdated memory's place."""
    return {old for old, states in newer.items()
            if states and (any(x.link.get("proposedBy") for x in states)
                           or asks_about(query, [word for x in states for word in _link_words(x)])
                           or any(names(query, _speaker(x.props))
                                  and asks_for(query, str(x.link.get("attribute") or ""))
                                  for x in states))}


def asked_for_itself(newer: Mapping[str, Sequence[NewerState]], query: str | None) -> set[str]:
    """The outdated candidates whose links the query asks about by what changed, not
    only by whom: it names a word the link matched on other than its subject (a
    speaker's name is in most questions of a chat). For them the state asked for
    goes first (memlattice.search.currency.prefer_current)."""
    return {old for old, states in newer.items()
            if states and asks_about(query, [
                word for x in states for word in _link_words(x)[1:]
                if word not in set(str(x.link.get("subject") or "").split())])}


def _speaker(props: Mapping[str, Any]) -> str | None:
    """Who said a conversation turn (its stored metadata's speaker), if it is one."""
    stored = props.get("metadataJson")
    return speaker_in_json(stored) if isinstance(stored, str) else None


def _link_words(state: NewerState) -> list[str]:
    link = state.link
    return [str(link.get("subject") or ""), str(link.get("attribute") or ""),
            *(str(w) for w in link.get("matched") or ())]


def outdating(states: Sequence[NewerState]) -> tuple[Memory | None, UpdateLink | None]:
    """The memory that outdates a hit, and the hit's own link on the way to it.

    The memory one link away (the latest of those) when it still holds. When each of
    those has been replaced in turn (a confirmed chain Bergen -> Oslo -> Tromsø: Oslo
    is superseded and the recall query brings only states that hold), the nearest state
    that holds further along (fewest links, then the latest): the hit is outdated all
    the same, and a reader following `outdatedBy` lands on what is true now. `update`
    is always the first link out of the hit, the one its own status depends on.
    """
    if not states:
        return None, None
    nearest = min(x.hops for x in states)
    latest = max((x for x in states if x.hops == nearest),
                 key=lambda x: (x.props.get("createdAt") or 0, str(x.props["id"])))
    by = memory_from_properties(latest.props)
    return by, link_from(latest.link, newer=by)
