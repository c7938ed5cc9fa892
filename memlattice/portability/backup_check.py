"""What `memlattice restore` checks of a backup file before it writes anything.

A restore writes into a fresh database and cannot be undone there (a second
restore refuses the half-filled one), so every reason to refuse a file is
found in one read of it first:

- it is a whole gzip file of this format and version, closed by its `end` line;
- it holds exactly what that `end` line counts: as many nodes and
  relationships, per label and per type. A line lost or added after the
  backup wrote the file (a copy cut and mended, an edit) is refused here;
  without the count a missing node would only show up as its relationships
  "skipped", which the restore reports for nodes deleted while the backup read;
- its memories' primary vectors have this server's embedding dimension: the
  vector index is built for the server's size, and Neo4j leaves vectors of
  another size out of it without a word, so such a restore would succeed and
  no restored memory would ever be found by similarity;
- its memories' primary vectors were made by this server's embedding model, as
  each memory's `embeddingModel` says ("wordllama/l2_supercat/256"): vectors of
  another model of the same size would be indexed without a word and compared
  with queries embedded by this one, which finds noise. A memory whose vector a
  client sent ("client", or the name it gave) is the client's affair and passes,
  and so does one that names no model (a store of an early release): its model
  is unknown, and `Checked.unnamed` counts it. `other_model_ok` restores another
  model's vectors all the same, for an operator who will re-embed.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlattice.core.errors import DimensionMismatch, EmbeddingModelMismatch, ValidationError
from memlattice.embeddings.base import identity_parts
from memlattice.portability.backup import FORMAT, VERSION
from memlattice.portability.backup_values import (
    BackupValueError,
    decode_properties,
    embedding_model_of,
)


class _Tally:
    """Counts of a file's node and relationship lines, and its memories' dimensions."""

    def __init__(self) -> None:
        self.nodes = 0
        self.relationships = 0
        self.labels: Counter[str] = Counter()
        self.types: Counter[str] = Counter()
        self.dimensions: Counter[int] = Counter()
        self.models: Counter[str] = Counter()
        self.unnamed = 0

    def add(self, path: Path, number: int, record: dict[str, Any]) -> None:
        kind = record.get("t")
        if kind == "node":
            self.nodes += 1
            self.labels.update(record.get("l") or [])
            if "Memory" in (record.get("l") or []):
                props = record.get("p") or {}
                dimension = _dimension(path, number, props)
                if dimension is not None:
                    self.dimensions[dimension] += 1
                    model = embedding_model_of(record.get("l") or [], props)
                    if model is not None:
                        self.models[model] += 1
                    else:
                        self.unnamed += 1
        elif kind == "rel":
            self.relationships += 1
            self.types[str(record.get("y"))] += 1

    def differences(self, end: dict[str, Any]) -> list[str]:
        """What the `end` line counts and the file does not hold: `what: held of counted`."""
        found = [f"{name} nodes: {held} of {counted}"
                 for name, held, counted in _compare(self.labels, end.get("labels"))]
        found += [f"{name} relationships: {held} of {counted}"
                  for name, held, counted in _compare(self.types, end.get("types"))]
        if "embeddingModels" in end:  # files of earlier releases do not count them
            found += [f"memories embedded by {name}: {held} of {counted}"
                      for name, held, counted in _compare(self.models, end["embeddingModels"])]
        for what, held in (("nodes", self.nodes), ("relationships", self.relationships)):
            if held != end.get(what):
                found.append(f"{what}: {held} of {end.get(what)}")
        return found


def _compare(held: Counter[str], counted: Any) -> list[tuple[str, int, int]]:
    wanted = Counter({str(k): int(v) for k, v in (counted or {}).items()})
    return [(name, held[name], wanted[name]) for name in sorted(set(held) | set(wanted))
            if held[name] != wanted[name]]


def _dimension(path: Path, number: int, props: dict[str, Any]) -> int | None:
    """A memory's primary vector size: `embeddingDimension`, else its vector's length."""
    if props.get("embeddingDimension") is not None:
        return int(props["embeddingDimension"])
    if props.get("embedding") is None:
        return None
    try:
        vector = decode_properties({"embedding": props["embedding"]})["embedding"]
    except (BackupValueError, TypeError) as exc:
        raise ValidationError(f"{path}: line {number} has a bad embedding: {exc}") from exc
    return len(vector)


@dataclass
class Checked:
    """What `check` read of a file it accepts."""

    header: dict[str, Any]
    end: dict[str, Any]
    models: Counter[str] = field(default_factory=Counter)
    """Memories with a primary vector, by the `embeddingModel` they name."""
    unnamed: int = 0
    """Memories with a primary vector that name no model (unknown: not checked)."""

    def other_models(self, model: str | None) -> dict[str, int]:
        """The models of this server's providers, other than `model`, that embedded some
        of the memories (None: the server embeds nothing, and nothing is compared)."""
        if model is None:
            return {}
        return {name: n for name, n in sorted(self.models.items())
                if name != model and identity_parts(name) is not None}


def check(path: Path, *, dimension: int | None = None, model: str | None = None,
          other_model_ok: bool = False) -> Checked:
    """The file's header and end line, once the whole file is read and found to be a
    whole backup holding what it counts (see the module docstring); with `dimension`,
    one whose memories' vectors have that size; with `model` (an embedder identity,
    memlattice.embeddings.base.model_identity), one whose memories this model
    embedded, unless `other_model_ok`. Raises before anything is written."""
    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    tally = _Tally()
    try:
        with gzip.open(path, "rb") as raw:
            for number, line in enumerate(raw, 1):
                record = _record(path, number, line)
                if number == 1:
                    header = _header(path, record)
                    continue
                if end is not None:
                    raise ValidationError(f"{path}: line {number} follows the `end` line")
                if record.get("t") == "end":
                    end = record
                else:
                    tally.add(path, number, record)
    except (OSError, EOFError) as exc:
        raise ValidationError(f"{path} is not a complete gzip backup ({exc})") from exc
    if header is None:
        raise ValidationError(f"{path} is not a Memlattice backup (no `{FORMAT}` header)")
    if end is None:
        raise ValidationError(f"{path} has no `end` line: the backup was cut short")
    try:
        differences = tally.differences(end)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ValidationError(f"{path}: its `end` line does not count as a backup's does") from exc
    if differences:
        raise ValidationError(
            f"{path} does not hold what its `end` line counts ({'; '.join(differences[:10])}):"
            " lines were lost or added after the backup wrote it; restore another copy")
    wrong = sorted(set(tally.dimensions) - {dimension}) if dimension is not None else []
    if wrong:
        sizes = ", ".join(f"{tally.dimensions[d]} in {d} dimensions" for d in wrong)
        raise DimensionMismatch(
            f"{path} holds memories embedded in another size than this server's"
            f" {dimension} dimensions ({sizes}): restore with the embedding settings of"
            f" the server that was backed up (MEMLATTICE_EMBEDDING_DIMENSION={wrong[0]},"
            " and its MEMLATTICE_EMBEDDING_PROVIDER and _MODEL), then re-embed if you"
            " want another model", expected=dimension, actual=wrong[0])
    checked = Checked(header, end, tally.models, tally.unnamed)
    others = checked.other_models(model)
    if others and not other_model_ok:
        raise EmbeddingModelMismatch(
            f"{path} holds memories embedded by another model than this server's {model}"
            f" ({', '.join(f'{n} by {name}' for name, n in others.items())}): vectors of"
            " another model mean nothing to this one's, whatever their size, and searches"
            " would find noise. Restore with the embedding settings of the server that"
            f" was backed up ({_settings_of(next(iter(others)))}), or pass"
            " --allow-other-model and re-embed (docs/operating.md, \"Backup and restore\")",
            expected=model, actual=next(iter(others)))
    return checked


def _settings_of(identity: str) -> str:
    """The `MEMLATTICE_EMBEDDING_*` settings whose embedder has this identity."""
    parts = identity_parts(identity)
    assert parts is not None
    provider, model, dimension = parts
    return (f"MEMLATTICE_EMBEDDING_PROVIDER={provider} MEMLATTICE_EMBEDDING_MODEL={model}"
            f" MEMLATTICE_EMBEDDING_DIMENSION={dimension}")


def _record(path: Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        if number == 1:
            raise ValidationError(
                f"{path} is not a Memlattice backup (no `{FORMAT}` header)") from exc
        raise ValidationError(f"{path}: line {number} is not JSON") from exc
    if not isinstance(record, dict):
        if number == 1:
            raise ValidationError(f"{path} is not a Memlattice backup (no `{FORMAT}` header)")
        raise ValidationError(f"{path}: line {number} is not an object")
    return record


def _header(path: Path, record: dict[str, Any]) -> dict[str, Any]:
    if record.get("format") != FORMAT:
        raise ValidationError(f"{path} is not a Memlattice backup (no `{FORMAT}` header)")
    if record.get("version") != VERSION:
        raise ValidationError(f"{path} is backup format version {record.get('version')};"
                              f" this release reads version {VERSION}")
    return record
