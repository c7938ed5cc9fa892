"""MEMLATTICE_KEY_CACHE_S: a process may reuse an API key it read for that long.

Off by default (tests/integration/test_auth.py: the very next request after a
revocation is refused). On, a key in use is read once per period, and a revocation
or a change of limits reaches the process within it; a key not found is never
remembered. Real Neo4j: the key graph's reads are counted, not replaced.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memlattice.core.errors import Unauthenticated
from memlattice.graph.keys import ApiKeyGraph, StoredKey
from memlattice.services.apikeys import Authenticator, KeySpec, create_key, revoke_key


class CountedKeys(ApiKeyGraph):
    """The real key graph, counting its look-ups."""

    reads = 0

    async def get(self, key_id: str) -> StoredKey | None:
        self.reads += 1
        return await super().get(key_id)


@pytest.fixture
async def keys(graph_client: Any) -> CountedKeys:
    return CountedKeys(graph_client)


async def test_off_by_default_every_request_reads_its_key(keys: CountedKeys) -> None:
    stored, secret = await create_key(keys, KeySpec(name="uncached", namespaces=("a",)))
    auth = Authenticator(keys)
    await auth.authenticate(f"Bearer {secret}")
    await auth.authenticate(f"Bearer {secret}")
    assert keys.reads == 2
    await revoke_key(keys, stored.id)
    with pytest.raises(Unauthenticated, match="revoked"):
        await auth.authenticate(f"Bearer {secret}")


async def test_a_cached_key_is_read_once_per_period(keys: CountedKeys) -> None:
    stored, secret = await create_key(keys, KeySpec(name="cached", namespaces=("a",)))
    auth = Authenticator(keys, cache_s=60)
    for _ in range(5):
        principal = await auth.authenticate(f"Bearer {secret}")
    assert keys.reads == 1 and principal.key_id == stored.id
    # The secret is still checked on every request, against the remembered hash.
    with pytest.raises(Unauthenticated, match="not valid"):
        await auth.authenticate(f"Bearer {secret[:-1]}{'a' if secret[-1] != 'a' else 'b'}")
    # Within the period a revocation made elsewhere is not seen yet: that is the trade.
    await revoke_key(keys, stored.id)
    await auth.authenticate(f"Bearer {secret}")
    assert keys.reads == 1


async def test_a_revocation_reaches_a_caching_process_within_the_period(
    keys: CountedKeys,
) -> None:
    stored, secret = await create_key(keys, KeySpec(name="revoked", namespaces=("a",)))
    auth = Authenticator(keys, cache_s=0.3)
    await auth.authenticate(f"Bearer {secret}")
    await revoke_key(keys, stored.id)
    await asyncio.sleep(0.4)  # past the period, however slow the machine: read again
    with pytest.raises(Unauthenticated, match="revoked"):
        await auth.authenticate(f"Bearer {secret}")
    assert keys.reads == 2


async def test_an_unknown_key_is_never_remembered(keys: CountedKeys) -> None:
    auth = Authenticator(keys, cache_s=60)
    for _ in range(3):
        with pytest.raises(Unauthenticated):
            await auth.authenticate("Bearer mlk_0123456789ab_" + "x" * 32)
    assert keys.reads == 3
