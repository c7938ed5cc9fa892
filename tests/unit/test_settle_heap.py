"""The serving paths' garbage-collector settings (memlattice.server.serving.settle_heap)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from memlattice.server.serving import YOUNG_GC_THRESHOLD, settle_heap


@pytest.fixture
def restored_collector() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


@pytest.mark.usefixtures("restored_collector")
def test_what_lives_at_startup_is_frozen_and_young_collections_are_rarer() -> None:
    long_lived = ["a list", "the collector tracks"]
    assert any(o is long_lived for o in gc.get_objects())
    _, older, oldest = gc.get_threshold()
    settle_heap()
    # Frozen objects sit in the permanent generation, which no collection walks.
    assert not any(o is long_lived for o in gc.get_objects())
    assert gc.get_threshold() == (YOUNG_GC_THRESHOLD, older, oldest)
    assert YOUNG_GC_THRESHOLD > 700  # CPython's default


@pytest.mark.usefixtures("restored_collector")
def test_garbage_left_before_startup_is_collected_not_frozen() -> None:
    class Cycle:
        pass

    a, b = Cycle(), Cycle()
    a.other, b.other = b, a  # type: ignore[attr-defined]
    gone = weakref.ref(a)
    del a, b
    settle_heap()
    assert gone() is None
