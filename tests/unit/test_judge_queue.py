"""What the update judge's queue keeps of a writer and how it retries (core.judge_queue)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlattice.core.auth import Principal
from memlattice.core.judge_queue import Retrying, Waiting, WriterView, by_writer
from memlattice.core.model import Scope, Sensitivity


@given(st.sampled_from(list(Scope)), st.sampled_from(list(Sensitivity)))
def test_a_stored_view_rebuilds_exactly_the_writers_tenant(scope: Scope,
                                                           clearance: Sensitivity) -> None:
    writer = Principal(key_id="k1", name="k1", namespaces=frozenset({"acme/*"}),
                       max_scope=scope, clearance=clearance, can_write=True)
    tenant = writer.tenant("acme/crm", write=True)
    view = WriterView.of(tenant, "key:k1#k1/agent")
    again = WriterView.stored("acme/crm", view.properties())
    assert again == view
    rebuilt = again.tenant()
    # The same visibility: namespace, clearance and scope levels; never wider.
    assert rebuilt.params() == tenant.params()
    assert (rebuilt.clearance, rebuilt.scopes, rebuilt.principal) == (
        tenant.clearance, tenant.scopes, tenant.principal)
    assert rebuilt.writable


def test_a_view_of_an_unknown_clearance_is_refused() -> None:
    props = {"clearance": "secret", "scope": "agent", "principal": "p", "actor": "a"}
    try:
        WriterView.stored("acme", props)
    except ValueError:
        return
    raise AssertionError("an unknown clearance was read")


def test_retries_wait_longer_each_time_up_to_the_longest() -> None:
    retrying = Retrying(first_s=10.0, max_s=600.0, max_malformed=3)
    waits = [retrying.delay_s(n) for n in range(1, 10)]
    assert waits[:4] == [10.0, 20.0, 40.0, 80.0]
    assert waits == sorted(waits) and max(waits) == 600.0
    assert retrying.delay_s(10_000) == 600.0  # no overflow, however long it failed
    assert not retrying.gives_up(2) and retrying.gives_up(3)


def test_batches_are_grouped_by_writer_so_no_prompt_mixes_two_keys_views() -> None:
    def view(principal: str, clearance: Sensitivity) -> WriterView:
        return WriterView(namespace="n", clearance=clearance, max_scope=Scope.AGENT,
                          principal=principal, actor=principal)

    high, low = view("a", Sensitivity.HIGH), view("b", Sensitivity.LOW)
    items = [Waiting(id=str(i), content="c", at=None, view=v, failures=0, malformed=0)
             for i, v in enumerate([high, low, high, low, low])]
    groups = by_writer(items)
    assert [(v, [w.id for w in ws]) for v, ws in groups] == [
        (high, ["0", "2"]), (low, ["1", "3", "4"])]
