"""The first pass of `memlattice restore` (memlattice.portability.backup_check) on
files no backup writes: each refused with a ValidationError that says why, never a
traceback. Files a backup wrote, and damaged copies of them: tests/integration/test_backup_checks.py."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from memlattice.core.errors import DimensionMismatch, EmbeddingModelMismatch, ValidationError
from memlattice.core.settings import EmbeddingSettings
from memlattice.embeddings.base import configured_identity, identity_parts, model_identity
from memlattice.embeddings.local import WordLlamaEmbedder
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
    checked = check(path, dimension=8)
    assert checked.header["format"] == "memlattice-backup" and checked.end["nodes"] == 1
    with pytest.raises(DimensionMismatch, match="MEMLATTICE_EMBEDDING_DIMENSION=8"):
        check(path, dimension=256)


def memory_of(model: str) -> str:
    return MEMORY.replace('"id":"m"', f'"id":"m","embeddingModel":"{model}"')


def test_an_embedder_identity_names_the_settings_that_make_it() -> None:
    local = WordLlamaEmbedder(model="l2_supercat", dimension=128)
    assert local.model == model_identity("local", "l2_supercat", 128)
    assert configured_identity(EmbeddingSettings(dimension=128)) == local.model
    assert configured_identity(EmbeddingSettings(provider="none")) is None
    assert identity_parts(local.model) == ("local", "l2_supercat", 128)
    assert identity_parts("openai/org/model-v2/768") == ("openai", "org/model-v2", 768)
    for name in ("client", "my-own-model", "wordllama/x", "openai/x/many"):
        assert identity_parts(name) is None


def test_memories_another_model_embedded_are_refused_unless_allowed(tmp_path: Path) -> None:
    """Vectors of the same size from another model are indexed without a word and
    compared with queries this server's model embeds: refused, with the settings that
    would restore them, unless the operator says they will re-embed."""
    path = written(tmp_path, HEADER + memory_of("openai/text-embedding-3-small/8") + END)
    with pytest.raises(EmbeddingModelMismatch, match=(
            "MEMLATTICE_EMBEDDING_PROVIDER=openai MEMLATTICE_EMBEDDING_MODEL="
            "text-embedding-3-small MEMLATTICE_EMBEDDING_DIMENSION=8")) as refused:
        check(path, dimension=8, model="wordllama/l2_supercat/8")
    assert refused.value.code == "EMBEDDING_MODEL_MISMATCH"
    assert refused.value.details == {"expected": "wordllama/l2_supercat/8",
                                     "actual": "openai/text-embedding-3-small/8"}
    allowed = check(path, dimension=8, model="wordllama/l2_supercat/8", other_model_ok=True)
    assert allowed.other_models("wordllama/l2_supercat/8") == {
        "openai/text-embedding-3-small/8": 1}
    assert check(path, dimension=8, model="openai/text-embedding-3-small/8").models == {
        "openai/text-embedding-3-small/8": 1}
    assert check(path, dimension=8, model=None).other_models(None) == {}  # provider none


@pytest.mark.parametrize("model", ["client", "my-own-model"])
def test_a_clients_vectors_are_its_own_affair(tmp_path: Path, model: str) -> None:
    path = written(tmp_path, HEADER + memory_of(model) + END)
    assert check(path, dimension=8, model="wordllama/l2_supercat/8").models == {model: 1}


def test_memories_that_name_no_model_are_restored_unchecked(tmp_path: Path) -> None:
    """A store of an early release: its memories' model is unknown, and counted."""
    checked = check(written(tmp_path, HEADER + MEMORY + END), dimension=8,
                    model="wordllama/l2_supercat/8")
    assert checked.unnamed == 1 and not checked.models


def test_a_file_holding_other_models_than_its_end_line_counts_is_refused(
        tmp_path: Path) -> None:
    """The `end` line counts the memories by the model that embedded them; a file
    whose memories say otherwise was altered after the backup wrote it."""
    model = "wordllama/l2_supercat/8"
    counted = END.replace('"types":{}', f'"types":{{}},"embeddingModels":{{"{model}":1}}')
    assert check(written(tmp_path, HEADER + memory_of(model) + counted), dimension=8,
                 model=model).models == {model: 1}
    with pytest.raises(ValidationError, match=f"memories embedded by {model}: 0 of 1"):
        check(written(tmp_path, HEADER + memory_of("client") + counted), dimension=8,
              model=model)
