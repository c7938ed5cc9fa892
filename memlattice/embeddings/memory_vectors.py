"""A memory's vector from its `EmbeddingText`: the words, plus its speaker at a fixed weight.

memlattice.core.embedding_text says what stands for a memory (a turn's words and
its speaker apart); this embeds it. The words and the speaker's name are embedded
apart (in one provider call, each distinct text once) and added:

    vector = unit(unit(words) + SPEAKER_WEIGHT * unit(speaker))

so the name's share of a turn's vector is the same however long the turn, where
in "speaker: words" it was one token of the average: most of a short turn, little
of a long one. Every place the server embeds a memory goes through `embed_memories`,
so one namespace never holds vectors of two recipes.

SPEAKER_WEIGHT was measured with the server's WordLlama on both quality benchmarks
(docs/benchmarks.md). LoCoMo dev (bench.locomo --server-embedder, default search,
recall@10 over categories 1-4): "speaker: words" as one text 0.780, words alone
0.775, weights 0.3 / 0.5 / 0.7 / 1.0: 0.784 / 0.791 / 0.790 / 0.784. Knowledge
updates (bench.knowledge_update, current@1 over dev and holdout): one text 0.635,
words alone 0.519, 0.3 / 0.5 / 0.7 / 1.0: 0.558 / 0.577 / 0.635 / 0.635. 0.7 is
the one weight that loses neither; what it costs is LoCoMo's adversarial questions
(category 5, not in the headline: 0.741 -> 0.638), most of which name the speaker
who did not say the evidence.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlattice.core.embedding_text import EmbeddingText
from memlattice.embeddings.base import Embedder, l2_normalise

SPEAKER_WEIGHT = 0.7


def blend(words: Sequence[float], speaker: Sequence[float] | None,
          weight: float = SPEAKER_WEIGHT) -> list[float]:
    """unit(words + weight * speaker), both unit vectors (an `Embedder`'s are). A
    provider's vector of the wrong size is passed on as it came, for its caller's
    dimension check to refuse."""
    if speaker is None or weight == 0 or len(speaker) != len(words):
        return [float(x) for x in words]
    return l2_normalise([w + weight * s for w, s in zip(words, speaker, strict=True)])


async def embed_memories(embedder: Embedder, texts: Sequence[EmbeddingText]) -> list[list[float]]:
    """One vector per memory, in order; every distinct text embedded once, in one call."""
    if not texts:
        return []
    wanted = list(dict.fromkeys(
        [t.words for t in texts]
        + [t.speaker for t in texts if t.speaker is not None and SPEAKER_WEIGHT]))
    vectors = dict(zip(wanted, await embedder.embed(wanted), strict=True))
    return [blend(vectors[t.words],
                  vectors[t.speaker] if t.speaker is not None and SPEAKER_WEIGHT else None,
                  SPEAKER_WEIGHT)
            for t in texts]


__all__ = ["SPEAKER_WEIGHT", "blend", "embed_memories"]
