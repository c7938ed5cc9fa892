"""`services.outdating.asked_about`: which outdated hits may let their newest state in."""

from __future__ import annotations

from typing import Any

from memlattice.graph.recall_rows import NewerState
from memlattice.services.outdating import asked_about


def state(**link: Any) -> NewerState:
    base = {"id": "u1", "kind": "update", "status": "candidate", "subject": "ines",
            "attribute": "residence", "matched": ["bergen", "tromsø"]}
    return NewerState(hops=1, link={**base, **link}, props={"id": "new", "createdAt": 2})


def test_a_found_rule_link_lets_its_state_in_only_when_the_question_is_about_it() -> None:
    newer = {"old": [state()]}
    assert asked_about(newer, "Where does Ines live? Still in Bergen?") == {"old"}
    assert asked_about(newer, "What did we cook on Sunday?") == set()


def test_a_link_a_writer_stated_lets_its_state_in_whatever_the_question_names() -> None:
    stated = {"old": [state(proposedBy="key:agent#1", subject="", attribute="", matched=[])]}
    assert asked_about(stated, "What did we cook on Sunday?") == {"old"}
    assert asked_about({"old": []}, "anything") == set()
