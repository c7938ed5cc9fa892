"""`open_graph`: a verified Neo4j driver, the schema migrated unless told not to.

The smaller half of memlattice.server.runtime, for the commands that need only
the database (`memlattice keys`, `backup`, `restore`, `migrate`): kept apart so
that such a command loads the driver and nothing of the service (the GraphQL
schema, the services, the embedders, numpy's users), which cost it most of its
run time: a `memlattice keys list` spent about nine tenths of it importing.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from memlattice.core.settings import Settings, resolve_neo4j_uri
from memlattice.graph.client import GraphClient, QueryObserver

log = logging.getLogger("memlattice.server.runtime")


@dataclass(frozen=True)
class OpenGraph:
    """A verified driver, and the migrations this opening applied (empty when none)."""

    client: GraphClient
    uri: str
    applied: list[int]


@contextlib.asynccontextmanager
async def open_graph(settings: Settings, *, migrate_schema: bool = True,
                     observer: QueryObserver | None = None
                     ) -> AsyncIterator[OpenGraph]:
    """Connect to Neo4j with the configured limits, verify the connection and (unless
    told not to) migrate the schema; the driver is closed on exit, also on failure.
    `observer` is told each query's label and seconds (the app's metrics)."""
    uri = resolve_neo4j_uri(settings)
    neo4j = settings.neo4j
    client = GraphClient.connect(
        uri, neo4j.user, neo4j.password.get_secret_value(), neo4j.database,
        connection_timeout_s=neo4j.connection_timeout_s,
        acquisition_timeout_s=neo4j.acquisition_timeout_s,
        max_retry_time_s=neo4j.max_retry_time_s, pool_size=neo4j.pool_size,
        observer=observer,
    )
    try:
        await client.verify()
        applied: list[int] = []
        if migrate_schema:
            # Imported here: the migrations bring the write-side graph code with them,
            # which a command that only reads or writes keys never needs.
            from memlattice.graph.migrations import migrate

            applied = await migrate(client, dimension=settings.embedding.dimension,
                                    index=settings.vector_index)
            if applied:
                log.info("applied migrations %s", applied)
        yield OpenGraph(client=client, uri=uri, applied=applied)
    finally:
        await client.close()
