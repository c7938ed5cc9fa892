"""Export kinds for what hangs off a namespace's memories (see graph.transfer_parts).

    _type            one line per                     carries
    payloadGraph     typed record with a graph        tool calls (+ dependsOn), plan
                                                      nodes and their DATA/CONTROL edges
    namespaceConfig  namespace (0 or 1)               its search defaults and
                                                      configured embedding model
    vectorSpace      namespace (0 or 1)               the space it searches and the one
                                                      being built (VectorSpaceState)
    vector           memory and side space            the memory's vector in that space

Side vectors are carried, not re-embedded: an imported namespace searches the
space it searched at export time as soon as the import ends, with no provider
call (as primary vectors are kept when their model is the server's). The
space's index is created on import with the server's index settings. A space
still `building` when exported goes on building on the destination: the
re-embed worker of any server on that database picks it up and embeds what
is missing.

Module-level code here imports nothing from `kinds` (which lists these), so
each kind is a set of plain functions that `kinds.KINDS` wraps.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from memlattice.core.errors import ValidationError
from memlattice.core.model import validated
from memlattice.core.search_config import NamespaceSettings
from memlattice.core.vector_spaces import BuildStatus, VectorSpace
from memlattice.graph import transfer_parts as queries
from memlattice.graph.record_codec import PLAN_EDGE_TYPES
from memlattice.graph.transfer import Cursor, TransferGraph
from memlattice.graph.transfer_parts import OWNER_PROPERTIES, PartsTransfer
from memlattice.portability.values import compact_json, from_json, to_json

if TYPE_CHECKING:
    from memlattice.portability.kinds import ImportEnv

Record = dict[str, Any]
Row = dict[str, Any]
PAGE = 500

_ARGS = {"argsJson": "args"}
_CALL_FIELDS = frozenset({"callId", "tool", "args", "result", "at", "dependsOn"})
_NODE_FIELDS = frozenset({"nodeId", "kind", "label", "tool", "args"})
_EDGE_TYPES = frozenset(PLAN_EDGE_TYPES.values())
_CONFIG_FIELDS = frozenset({"version", "settings", "updatedAt", "updatedBy"})
_STATE_TIMES = ("updatedAt", "finishedAt")
_STATE_FIELDS = frozenset({"activeModel", "activeDimension", "targetModel", "targetDimension",
                           "status", "error", *_STATE_TIMES})


def _parts(graph: TransferGraph) -> PartsTransfer:
    return PartsTransfer(graph.client, getattr(graph, "vector_index", None))


def _text(record: Mapping[str, Any], name: str, where: str | None = None) -> str:
    value = record.get(name)
    field = f"{where}.{name}" if where else name
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{field} must be a non-blank string", field=field)
    return value


def _objects(record: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    value = record.get(name) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValidationError(f"{name} must be a list of JSON objects", field=name)
    return value


# ------------------------------------------------------------------ payloadGraph


def _node_json(props: Mapping[str, Any], times: tuple[str, ...]) -> dict[str, Any]:
    kept = {k: v for k, v in props.items() if k not in OWNER_PROPERTIES and k != "dependsOn"}
    return to_json(kept, times=times, inline=_ARGS)


def _payload_graph_record(row: Mapping[str, Any]) -> Record:
    calls = [dict(sorted({**_node_json(c, ("at",)),
                          "dependsOn": sorted(c.get("dependsOn") or [])}.items()))
             for c in sorted(row["calls"], key=lambda c: c["callId"])]
    nodes = [_node_json(n, ()) for n in sorted(row["nodes"], key=lambda n: n["nodeId"])]
    edges = sorted(({"source": e["source"], "target": e["target"], "type": e["type"]}
                    for e in row["edges"]), key=lambda e: (e["source"], e["target"], e["type"]))
    return {"_type": "payloadGraph", "memory": row["memory"], "planEdges": edges,
            "planNodes": nodes, "toolCalls": calls}


async def export_payload_graphs(graph: TransferGraph, namespace: str,
                                ) -> AsyncIterator[list[Record]]:
    parts = _parts(graph)
    after: Cursor | None = None
    while True:
        rows, after = await parts.payload_graph_page(namespace, after, PAGE)
        if after is None:
            return
        if rows:
            yield [_payload_graph_record(r) for r in rows]


def _ids(items: list[dict[str, Any]], name: str, key: str,
         fields: frozenset[str]) -> set[str]:
    ids: set[str] = set()
    for item in items:
        unknown = set(item) - fields
        if unknown:
            raise ValidationError(f"{name}: unknown field {min(unknown)!r}; expected"
                                  f" {', '.join(sorted(fields))}", field=name)
        id = _text(item, key, name)
        if id in ids:
            raise ValidationError(f"{name}: {key} {id!r} repeats", field=f"{name}.{key}")
        ids.add(id)
    return ids


def _graph_node(item: Mapping[str, Any], times: tuple[str, ...]) -> dict[str, Any]:
    props = from_json(item, times=times, inline={}, skip=("dependsOn", "args"))
    props["argsJson"] = compact_json(item.get("args"))  # stored even when null
    return props


def decode_payload_graph(record: Record, env: ImportEnv) -> Row:
    memory = _text(record, "memory")
    calls, nodes = _objects(record, "toolCalls"), _objects(record, "planNodes")
    edges = _objects(record, "planEdges")
    call_ids = _ids(calls, "toolCalls", "callId", _CALL_FIELDS)
    node_ids = _ids(nodes, "planNodes", "nodeId", _NODE_FIELDS)
    deps = []
    for call in calls:
        _text(call, "tool", "toolCalls")
        depends = call.get("dependsOn") or []
        if not isinstance(depends, list) or not set(depends) <= call_ids:
            raise ValidationError("toolCalls.dependsOn may only name calls of the same record",
                                  field="toolCalls.dependsOn")
        deps += [{"source": call["callId"], "target": target} for target in depends]
    for edge in edges:
        if (edge.get("type") not in _EDGE_TYPES or edge.get("source") not in node_ids
                or edge.get("target") not in node_ids):
            raise ValidationError("planEdges join two planNodes of the same record by DATA or"
                                  " CONTROL", field="planEdges")
    return {"memory": env.remap(memory),
            "toolCalls": [_graph_node(c, ("at",)) for c in calls], "toolDeps": deps,
            "planNodes": [_graph_node(n, ()) for n in nodes],
            "planEdges": [{"source": e["source"], "target": e["target"], "type": e["type"]}
                          for e in edges]}


async def write_payload_graphs(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    return await _parts(graph).replace_payload_graphs(namespace, rows)


async def count_payload_graphs(graph: TransferGraph, namespace: str) -> int:
    return await _parts(graph).count(queries.count_payload_graphs(namespace))


# ------------------------------------------------------------------ namespace nodes


async def _export_node(graph: TransferGraph, namespace: str, label: str, type: str,
                       times: tuple[str, ...], inline: Mapping[str, str],
                       ) -> AsyncIterator[list[Record]]:
    props = await _parts(graph).node(label, namespace)
    if props is not None:
        props.pop("namespace", None)
        yield [{"_type": type, **to_json(props, times=times, inline=inline)}]


async def export_namespace_config(graph: TransferGraph, namespace: str,
                                  ) -> AsyncIterator[list[Record]]:
    async for page in _export_node(graph, namespace, "NamespaceConfig", "namespaceConfig",
                                   ("updatedAt",), {"settingsJson": "settings"}):
        yield page


def decode_namespace_config(record: Record, env: ImportEnv) -> Row:
    unknown = set(record) - _CONFIG_FIELDS - {"_type", "namespace"}
    if unknown:
        raise ValidationError(f"namespaceConfig: unknown field {min(unknown)!r}",
                              field=min(unknown))
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValidationError("version must be an integer of at least 1", field="version")
    settings = record.get("settings")
    if not isinstance(settings, dict):
        raise ValidationError("settings must be a JSON object", field="settings")
    validated(NamespaceSettings, **settings)
    _text(record, "updatedAt")
    return {"props": from_json(record, times=("updatedAt",), inline={"settingsJson": "settings"},
                               skip=("_type", "namespace"))}


async def write_namespace_config(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    parts = _parts(graph)
    return sum([await parts.put_node("NamespaceConfig", namespace, r["props"]) for r in rows])


async def count_namespace_configs(graph: TransferGraph, namespace: str) -> int:
    return await _parts(graph).count(queries.count_configs(namespace))


async def export_vector_space(graph: TransferGraph, namespace: str,
                              ) -> AsyncIterator[list[Record]]:
    async for page in _export_node(graph, namespace, "VectorSpaceState", "vectorSpace",
                                   _STATE_TIMES, {}):
        yield page


def _space(record: Mapping[str, Any], prefix: str) -> VectorSpace | None:
    model, dimension = record.get(f"{prefix}Model"), record.get(f"{prefix}Dimension")
    if model is None and dimension is None:
        return None
    if not isinstance(model, str) or not isinstance(dimension, int) or isinstance(
            dimension, bool):
        raise ValidationError(f"{prefix}Model and {prefix}Dimension go together: a model name"
                              " and an integer", field=f"{prefix}Model")
    return VectorSpace(model, dimension)


def decode_vector_space(record: Record, env: ImportEnv) -> Row:
    unknown = set(record) - _STATE_FIELDS - {"_type", "namespace"}
    if unknown:
        raise ValidationError(f"vectorSpace: unknown field {min(unknown)!r}",
                              field=min(unknown))
    if record.get("status") not in {s.value for s in BuildStatus}:
        raise ValidationError(f"status must be one of {', '.join(s.value for s in BuildStatus)}",
                              field="status")
    spaces = [s for s in (_space(record, "active"), _space(record, "target")) if s is not None]
    props = from_json(record, times=_STATE_TIMES, inline={}, skip=("_type", "namespace"))
    return {"props": props, "spaces": spaces}


async def write_vector_space(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    parts = _parts(graph)
    written = 0
    for row in rows:
        for space in row["spaces"]:
            await parts.ensure_index(space)
        written += await parts.put_node("VectorSpaceState", namespace, row["props"])
    return written


async def count_vector_spaces(graph: TransferGraph, namespace: str) -> int:
    return await _parts(graph).count(queries.count_space_states(namespace))


# ------------------------------------------------------------------ vector


async def export_vectors(graph: TransferGraph, namespace: str) -> AsyncIterator[list[Record]]:
    parts = _parts(graph)
    after: Cursor | None = None
    while True:
        rows, after = await parts.vector_page(namespace, after, PAGE)
        if after is None:
            return
        if rows:
            yield [{"_type": "vector", "dimension": space.dimension, "memory": memory,
                    "model": space.model, "vector": vector}
                   for memory, space, vector in rows]


def decode_vector(record: Record, env: ImportEnv) -> Row:
    memory = _text(record, "memory")
    model, dimension = record.get("model"), record.get("dimension")
    if not isinstance(model, str) or not isinstance(dimension, int) or isinstance(
            dimension, bool):
        raise ValidationError("a vector names its space: model (a string) and dimension (an"
                              " integer)", field="model")
    space = VectorSpace(model, dimension)
    vector = record.get("vector")
    if (not isinstance(vector, list) or len(vector) != dimension
            or not all(isinstance(x, int | float) and not isinstance(x, bool)
                       and math.isfinite(x) for x in vector)):
        raise ValidationError(f"vector must be {dimension} finite numbers", field="vector")
    return {"memory": env.remap(memory), "space": space, "vector": [float(x) for x in vector]}


async def write_vectors(graph: TransferGraph, namespace: str, rows: list[Row]) -> int:
    return await _parts(graph).upsert_vectors(
        namespace, [(r["memory"], r["space"], r["vector"]) for r in rows])


async def count_vectors(graph: TransferGraph, namespace: str) -> int:
    return await _parts(graph).count(queries.count_vectors(namespace))
