"""Keyphrases of a group of texts (a session's turns), found by statistics, no model.

A session is a retrievable unit when it carries keys a question can meet: who
and what it names (its entities) and what it is about in the speakers' own
lower-case words ("pottery class", "adoption agency", "camping trip"). This
module finds the second kind with RAKE (Rapid Automatic Keyword Extraction,
Rose, Engel, Cramer and Cowley, "Automatic keyword extraction from individual
documents", 2010), a published, language-light algorithm:

- candidate phrases are the runs of words between stop words, punctuation,
  numbers and names. The stop list is the Snowball English list
  (memlattice.core.query_words) plus English's common sentence openers and
  interjections (memlattice.core.entities.SENTENCE_OPENERS): general lists,
  not fitted to any data. Names (capitalised words inside a sentence) are the
  entities' job, so they split phrases here. A run longer than `MAX_WORDS` is
  a clause, not a phrase, and is dropped;
- each word scores degree / frequency over the candidates (a word that
  occurs in longer phrases scores higher), a phrase the sum of its words'
  scores, so multi-word phrases rank first; ties go to the phrase more texts
  say, then to alphabetical order, so the result is deterministic;
- phrases are folded like entity keys (case, possessive) and their last word's
  plural is folded (`fold_plural`), so "pottery classes" and "pottery class"
  are one key.

Why not a package: YAKE (the usual offline PyPI choice) brings networkx,
jellyfish and segtok for a score that needs only counts; RAKE costs
microseconds per turn, runs in the write's transaction, and its output is
explainable word by word. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache

from memlattice.core.query_words import SNOWBALL_ENGLISH_STOP_WORDS

MAX_WORDS = 3
LIMIT = 10
_WORD = re.compile(r"[^\W\d_][\w'’\-]*|[.!?;:,()\"“”]|\d[\w.,:]*", re.UNICODE)
_SENTENCE_END = frozenset(".!?;:")
_POSSESSIVE = re.compile(r"['’]s?$")
# The most frequent English verbs beyond the auxiliaries (and their informal
# contractions): a phrase is about a thing, and these say what someone did with it.
COMMON_VERBS = frozenset(["get", "gets", "got", "getting", "gotten", "go", "goes", "going", "gone", "went", "make", "makes", "made", "making", "take", "takes", "took", "taken", "taking", "know", "knows", "knew", "known", "think", "thinks", "thought", "see", "sees", "saw", "seen", "come", "comes", "came", "coming", "want", "wants", "wanted", "wanting", "look", "looks", "looked", "looking", "use", "uses", "used", "using", "find", "finds", "found", "give", "gives", "gave", "given", "tell", "tells", "told", "feel", "feels", "felt", "feeling", "try", "tries", "tried", "trying", "leave", "leaves", "left", "call", "calls", "called", "keep", "keeps", "kept", "put", "puts", "mean", "means", "meant", "seem", "seems", "seemed", "show", "shows", "showed", "hear", "hears", "heard", "say", "says", "said", "saying", "love", "loves", "loved", "hope", "hoped", "need", "needs", "needed", "gonna", "wanna", "gotta", "kinda", "sorta"])
# Words ending in these keep their final s ("glass", "bus", "analysis", "news").
_NOT_PLURAL = ("ss", "us", "is", "ws", "ics")


def fold_plural(word: str) -> str:
    """A lower-case English noun's singular by the regular rules ("classes" ->
    "class", "agencies" -> "agency", "dogs" -> "dog"); words the rules cannot
    tell ("glass", "bus", "news", short words) stay as they are. Irregular plurals
    ("children") are left alone: a miss costs a second key, a wrong fold a wrong
    one."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(_NOT_PLURAL):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    return word[:-1]


def phrase_key(words: Sequence[str]) -> str:
    """A phrase's key: lower case, without possessives, its last word singular."""
    folded = [_POSSESSIVE.sub("", w.replace("’", "'").casefold()) for w in words]
    folded = [w for w in folded if w]
    if not folded:
        return ""
    return " ".join([*folded[:-1], fold_plural(folded[-1])])


@cache
def stop_words() -> frozenset[str]:
    """The words no phrase holds (read on first use: memlattice.core.entities,
    which owns the sentence openers, folds plurals with this module)."""
    from memlattice.core.entities import SENTENCE_OPENERS

    return SNOWBALL_ENGLISH_STOP_WORDS | SENTENCE_OPENERS | COMMON_VERBS


def candidates(text: str) -> list[tuple[str, ...]]:
    """The candidate phrases of one text: runs of up to `MAX_WORDS` lower-case
    content words between stop words, punctuation, numbers and names."""
    found: list[tuple[str, ...]] = []
    run: list[str] = []
    sentence_start = True
    stop = stop_words()

    def close() -> None:
        if 0 < len(run) <= MAX_WORDS:
            found.append(tuple(run))
        run.clear()

    for token in _WORD.findall(text):
        if not token[:1].isalpha():
            close()
            sentence_start = token in _SENTENCE_END or (sentence_start and token in "\"“(")
            continue
        lowered = token.replace("’", "'").casefold()
        bare = _POSSESSIVE.sub("", lowered)
        named = token[:1].isupper() and not sentence_start
        sentence_start = False
        if (named or lowered in stop or bare in stop or len(bare) < 2
                or bare.endswith("ly") and len(bare) > 4):
            close()
            continue
        run.append(token)
    close()
    return found


def keyphrases(texts: Iterable[str], limit: int = LIMIT) -> list[str]:
    """The `limit` best RAKE keyphrases of `texts` taken together, best first."""
    phrases: list[tuple[str, tuple[str, ...]]] = []
    texts_saying: Counter[str] = Counter()
    for text in texts:
        seen: set[str] = set()
        for words in candidates(text):
            key = phrase_key(words)
            if key:
                phrases.append((key, tuple(key.split(" "))))
                seen.add(key)
        texts_saying.update(seen)
    frequency: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for _, words in phrases:
        for word in words:
            frequency[word] += 1
            degree[word] += len(words)
    scores = {key: sum(degree[w] / frequency[w] for w in words) * texts_saying[key]
              for key, words in phrases}
    ranked = sorted(scores, key=lambda k: (-scores[k], -texts_saying[k], k))
    return ranked[:limit]
