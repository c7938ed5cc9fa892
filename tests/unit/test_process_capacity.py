"""When a process counts as busy (memlattice.server.throttle.process_capacity): where
Neo4j runs decides how many operations in flight saturate the cores."""

from __future__ import annotations

import os

import pytest

from memlattice.core.settings import FairnessSettings
from memlattice.server.throttle import neo4j_on_this_machine, process_capacity

CPUS = len(os.sched_getaffinity(0))


@pytest.mark.parametrize("uri", [None, "bolt://localhost:7687", "neo4j://127.0.0.1:7687",
                                 "bolt://127.0.1.1", "bolt://[::1]:7687"])
def test_the_provisioned_neo4j_and_a_loopback_uri_share_this_machine(uri: str | None) -> None:
    assert neo4j_on_this_machine(uri)


@pytest.mark.parametrize("uri", ["bolt://neo4j:7687", "neo4j+s://abc.databases.neo4j.io",
                                 "bolt://10.0.0.5:7687", "bolt://[2001:db8::1]:7687"])
def test_another_host_does_not(uri: str) -> None:
    assert not neo4j_on_this_machine(uri)


def test_with_neo4j_here_one_operation_per_two_cores_saturates_them() -> None:
    assert process_capacity(FairnessSettings(), neo4j_here=True) == max(1, CPUS // 2)


def test_with_neo4j_elsewhere_two_per_core_keep_them_busy() -> None:
    assert process_capacity(FairnessSettings(), neo4j_here=False) == 2 * CPUS


@pytest.mark.parametrize("here", [True, False])
def test_the_setting_wins_and_zero_turns_sharing_off(here: bool) -> None:
    assert process_capacity(FairnessSettings(capacity=3), neo4j_here=here) == 3
    assert process_capacity(FairnessSettings(capacity=0), neo4j_here=here) is None
