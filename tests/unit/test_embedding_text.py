"""What the server embeds for a memory (core.embedding_text) and how (embeddings.memory_vectors)."""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Sequence
from typing import Any

from memlattice.core.embedding_text import (
    EmbeddingText,
    embedding_text,
    may_name_speaker,
    speaker_in_json,
    speaker_of,
    split_speaker,
)
from memlattice.core.messages import MessageInput, turn_content
from memlattice.embeddings import Embedder, l2_normalise
from memlattice.embeddings.memory_vectors import SPEAKER_WEIGHT, blend, embed_memories


def test_a_turn_is_its_words_and_its_speaker_apart() -> None:
    message = MessageInput(speaker="Jonas", content="Maps is eating half my battery")
    assert embedding_text(turn_content(message), {"speaker": "Jonas"}) == EmbeddingText(
        "Maps is eating half my battery", "Jonas")


def test_the_role_speaks_when_no_speaker_is_named() -> None:
    message = MessageInput(role="user", content="book the 9:40 train")
    assert turn_content(message) == "user: book the 9:40 train"
    assert embedding_text(turn_content(message), {"role": "user"}) == EmbeddingText(
        "book the 9:40 train", "user")
    assert embedding_text("Ines: hi", {"speaker": "Ines", "role": "user"}).speaker == "Ines"


def test_stored_metadata_json_says_the_same_as_the_mapping() -> None:
    content = "Jonas: Sure!"
    metadata = {"session": 3, "speaker": "Jonas"}
    assert embedding_text(content, json.dumps(metadata)) == embedding_text(content, metadata)
    assert speaker_in_json(json.dumps(metadata)) == speaker_of(metadata) == "Jonas"


def test_anything_else_is_its_content() -> None:
    assert embedding_text("Note: the port is 9100.", {}) == EmbeddingText(
        "Note: the port is 9100.")
    assert embedding_text("Note: the port is 9100.", None).speaker is None
    # Metadata naming someone else, or content edited to drop the name: the content.
    assert embedding_text("Marco: hi", {"speaker": "Ines"}) == EmbeddingText("Marco: hi")
    assert embedding_text("hi there", {"speaker": "Ines"}) == EmbeddingText("hi there")
    # Nothing but the name: nothing to embed apart from it.
    assert embedding_text("Ines:  ", {"speaker": "Ines"}) == EmbeddingText("Ines:  ")


def test_unreadable_or_odd_metadata_names_nobody() -> None:
    assert speaker_in_json("not json: {") is None
    assert speaker_in_json("[1, 2]") is None
    assert speaker_in_json('{"speaker": 7}') is None
    assert speaker_in_json(None) is None
    assert speaker_of({"speaker": ""}) is None


def test_metadata_is_only_read_when_the_content_can_name_a_speaker() -> None:
    assert not may_name_speaker("no colon and space here")
    assert not may_name_speaker("x" * 300 + ": far too late for a name")
    assert may_name_speaker("Jonas: hi")
    # Content that cannot be a turn is taken as it is, whatever the metadata holds.
    assert embedding_text("plain", "not json at all") == EmbeddingText("plain")


def test_lexical_search_splits_turns_the_same_way() -> None:
    from memlattice.search.lexical import split_speaker as lexical_split

    assert lexical_split is split_speaker
    assert split_speaker("Marco: Good idea.", "Marco") == ("Marco", "Good idea.")


class HashEmbedder(Embedder):
    """Deterministic unit vectors from the text; logs every call."""

    def __init__(self, dimension: int = 16) -> None:
        self.model = "hash/v1/16"
        self.dimension = dimension
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self.vector(t) for t in texts]

    def vector(self, text: str) -> list[float]:
        digest = hashlib.sha512(text.encode()).digest()
        return l2_normalise([float(v) for (v,) in struct.iter_unpack(">b", digest)][:16])


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_words_and_speakers_are_embedded_once_in_one_call() -> None:
    embedder = HashEmbedder()
    texts = [EmbeddingText("Sure!", "Jonas"), EmbeddingText("Maps eats my battery", "Jonas"),
             EmbeddingText("Sure!", "Ines"), EmbeddingText("a note")]
    vectors = await embed_memories(embedder, texts)
    assert len(embedder.calls) == 1
    assert sorted(embedder.calls[0]) == sorted(
        ["Sure!", "Maps eats my battery", "Ines", "Jonas", "a note"])
    assert vectors[3] == embedder.vector("a note")  # not a turn: the content's own vector
    for vector in vectors:
        assert math.isclose(math.hypot(*vector), 1.0)
    assert vectors[0] == blend(embedder.vector("Sure!"), embedder.vector("Jonas"))
    assert await embed_memories(embedder, []) == []


def test_the_speaker_weighs_the_same_in_every_turn() -> None:
    embedder = HashEmbedder()
    speaker = embedder.vector("Jonas")
    for words in ("Sure!", "Maps is eating half my battery since the update on Tuesday"):
        vector = blend(embedder.vector(words), speaker)
        # unit(w + a s) with w, s unit: cos with s is (w.s + a) / |w + a s|
        w = embedder.vector(words)
        expected = (_cos(w, speaker) + SPEAKER_WEIGHT) / math.sqrt(
            1 + SPEAKER_WEIGHT ** 2 + 2 * SPEAKER_WEIGHT * _cos(w, speaker))
        assert math.isclose(_cos(vector, speaker), expected)
    assert blend([1.0, 0.0], None) == [1.0, 0.0]
    assert blend([1.0, 0.0], [0.0, 1.0], 0) == [1.0, 0.0]
    assert blend([1.0, 0.0], [0.0, 1.0, 0.0]) == [1.0, 0.0]  # the caller's check refuses it


async def test_an_import_embeds_a_turn_as_a_write_does() -> None:
    from memlattice.portability.importer import fit_vectors

    embedder = HashEmbedder()
    rows: list[dict[str, Any]] = [
        {"id": "t", "props": {"content": "Jonas: Sure!", "metadataJson": '{"speaker": "Jonas"}'}},
        {"id": "n", "props": {"content": "Note: port 9100", "metadataJson": "{}"}}]
    assert await fit_vectors(rows, embedder, 16) == 2
    turn, note = (row["props"] for row in rows)
    assert turn["embedding"] == (await embed_memories(
        embedder, [EmbeddingText("Sure!", "Jonas")]))[0]
    assert note["embedding"] == embedder.vector("Note: port 9100")
