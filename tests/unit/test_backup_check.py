"""The first pass of `memlattice restore` (memlattice.portability.backup_check) on
files no backup writes: each refused with a ValidationError that says why, never a
traceback. Files a backup wrote, and damaged copies of them: tests/integration/test_backup_checks.py."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from memlattice.core.errors import DimensionMismatch, ValidationError
from memlattice.portability.backup_check import check

HEADER = '{"t":"header","format":"memlattice-backup","version":1}\n'
MEMORY = '{"t":"node","k":"1","l":["Memory"],"p":{"id":"m","embeddingDimension":8}}\n'
END = '{"t":"end","nodes":1,"relationships":0,"labels":{"Memory":1},"types":{}}\n'


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "file.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(text)
    return path


@pytest.mark.parametrize(("text", "reason"), [
    ("", "not a Memlattice backup"),
    ("not json\n", "not a Memlattice backup"),
    (HEADER + MEMORY, "cut short"),
    (HEADER + END, "does not hold what its `end` line counts"),
    (HEADER + MEMORY + MEMORY + END, "Memory nodes: 2 of 1"),
    (HEADER + MEMORY + '{"t":"end","labels":{"Memory":"many"}}\n', "does not count"),
    (HEADER + MEMORY + END + MEMORY, "follows the `end` line"),
])
def test_a_file_no_backup_writes_is_refused_with_its_reason(
        tmp_path: Path, text: str, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        check(written(tmp_path, text))


def test_memories_of_another_size_are_refused_and_of_this_size_pass(tmp_path: Path) -> None:
    path = written(tmp_path, HEADER + MEMORY + END)
    header, end = check(path, dimension=8)
    assert header["format"] == "memlattice-backup" and end["nodes"] == 1
    with pytest.raises(DimensionMismatch, match="MEMLATTICE_EMBEDDING_DIMENSION=8"):
        check(path, dimension=256)
