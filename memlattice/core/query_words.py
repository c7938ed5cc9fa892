"""Which words of a query carry what it asks about.

A question is mostly function words: "What did Melanie paint last year?"
holds "what" and "did" beside the three words it is about. Lucene's English
analyzer drops only 33 stop words (articles, a few prepositions), so "what",
"did", "when", "how" stay index terms, and BM25 scores every memory that
says them: in a conversation that is most turns, and the question's real
words are outvoted.

So a query leaves out the words of the Snowball project's English stop list
(https://snowballstem.org/algorithms/english/stop.txt, the list its English
stemmer is published with: pronouns, determiners, auxiliaries, question
words, prepositions, conjunctions), unless that would leave nothing (a query
of stop words only is searched as written). A standard list, not one fitted
to any data set. Memories are indexed as they are; only queries are cut.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

SNOWBALL_ENGLISH_STOP_WORDS = frozenset(["i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would", "should", "could", "ought", "i'm", "you're", "he's", "she's", "it's", "we're", "they're", "i've", "you've", "we've", "they've", "i'd", "you'd", "he'd", "she'd", "we'd", "they'd", "i'll", "you'll", "he'll", "she'll", "we'll", "they'll", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "doesn't", "don't", "didn't", "won't", "wouldn't", "shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't", "let's", "that's", "who's", "what's", "here's", "there's", "when's", "where's", "why's", "how's", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very"])


def is_stop_word(word: str) -> bool:
    """Whether a (lower-case) word is a stop word of a query; curly apostrophes count
    as straight ones."""
    return word.replace("’", "'") in SNOWBALL_ENGLISH_STOP_WORDS


def content_words(words: Iterable[str]) -> list[str]:
    """The words of a query that are not stop words, in order; all of them when every
    one is a stop word."""
    found = list(words)
    kept = [w for w in found if not is_stop_word(w.lower())]
    return kept or found
