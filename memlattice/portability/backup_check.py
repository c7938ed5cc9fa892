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
  no restored memory would ever be found by similarity.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

from memlattice.core.errors import DimensionMismatch, ValidationError
from memlattice.portability.backup import FORMAT, VERSION
from memlattice.portability.backup_values import BackupValueError, decode_properties


class _Tally:
    """Counts of a file's node and relationship lines, and its memories' dimensions."""

    def __init__(self) -> None:
        self.nodes = 0
        self.relationships = 0
        self.labels: Counter[str] = Counter()
        self.types: Counter[str] = Counter()
        self.dimensions: Counter[int] = Counter()

    def add(self, path: Path, number: int, record: dict[str, Any]) -> None:
        kind = record.get("t")
        if kind == "node":
            self.nodes += 1
            self.labels.update(record.get("l") or [])
            if "Memory" in (record.get("l") or []):
                dimension = _dimension(path, number, record.get("p") or {})
                if dimension is not None:
                    self.dimensions[dimension] += 1
        elif kind == "rel":
            self.relationships += 1
            self.types[str(record.get("y"))] += 1

    def differences(self, end: dict[str, Any]) -> list[str]:
        """What the `end` line counts and the file does not hold: `what: held of counted`."""
        found = [f"{name} nodes: {held} of {counted}"
                 for name, held, counted in _compare(self.labels, end.get("labels"))]
        found += [f"{name} relationships: {held} of {counted}"
                  for name, held, counted in _compare(self.types, end.get("types"))]
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


def check(path: Path, *, dimension: int | None = None
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The file's header and end line, once the whole file is read and found to be a
    whole backup holding what it counts (see the module docstring); with `dimension`,
    one whose memories' vectors have that size. Raises before anything is written."""
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
    return header, end


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
