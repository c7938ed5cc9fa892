"""Named things a memory mentions, found by rule (no model), and their keys.

Recall links a memory to the people, places, organisations and named things
it talks about (`(:Memory)-[:MENTIONS]->(:Entity)`), so that a question that
names one can prefer the memories about it (memlattice.search.entity_signal).
The extractor is rule-based, documented here, and costs microseconds per
memory, so it runs on every write:

- a *name* is a run of capitalised words ("Caroline", "New York", "Pride
  Parade") or an acronym ("LGBTQ", "NASA"), joined by at most one lower-case
  connector of names ("Bank of America", "Lord of the Rings" keeps its
  capitalised ends); digits and "I" are not names, nor is a month or a
  weekday alone ("in May", "on Saturday": a time, which event time resolves);
- English capitalises every sentence's first word, so a capitalised word
  that starts a sentence is a name only when it is not one of English's
  common sentence openers (pronouns, determiners, auxiliaries, conjunctions,
  question words, interjections and frequent adverbs: `SENTENCE_OPENERS`);
  an opener before a name is not part of it ("Alice moved" has one,
  "Yesterday I went" none, "New York is" one, "Then Alice left" "Alice");
- a name spoken *to* someone (direct address: "Hey Caroline!", "Thanks,
  Mel.", "You did it, John!") is not a mention: a vocative says who is
  listening, not what the memory is about. It is a name set off by
  punctuation at the start or the end of its sentence, or after a greeting;
- with `phrases` (off by default, `MEMLATTICE_ENTITY_PHRASES`), salient
  lower-case noun phrases too (`noun_phrases`: "a pottery class" is
  "pottery class"), their last word folded to singular;
- keys fold case, Unicode compatibility forms, spacing and the possessive
  ("Melanie's" is "melanie"), the same fold as a conversation's speakers
  (memlattice.core.messages.speaker_key), so a mention and a speaker meet
  on one Entity node.

Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Lower-case words that may join the capitalised words of one name.
_CONNECTORS = frozenset({"of", "the", "de", "da", "del", "van", "von", "and", "for", "la", "le"})
# Words that open a greeting or an address: the name after them is a vocative.
_GREETINGS = frozenset({"hey", "hi", "hello", "dear", "thanks", "thank", "bye", "goodbye",
                        "morning", "evening", "night", "congrats", "congratulations", "yo"})
# Capitalised words that are never names by themselves.
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'll", "i'd", "ok", "okay", "oh", "wow", "yes",
                        "no", "yeah", "hey", "hi", "hello", "thanks"})
# Months and weekdays alone are times, not things a memory is about: event time
# (memlattice.core.event_time) resolves them. In a longer name they stay ("May Day").
CALENDAR_WORDS = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "sunday"})
# Words that open English sentences and are not names: a general list of function
# words, question words, interjections and frequent adverbs (lower case).
SENTENCE_OPENERS = frozenset(["a", "about", "above", "after", "again", "all", "also", "although", "always", "an", "and", "another", "any", "anyway", "are", "as", "at", "be", "because", "been", "before", "being", "besides", "both", "but", "by", "can", "can't", "could", "couldn't", "definitely", "did", "didn't", "do", "does", "doesn't", "don't", "during", "each", "either", "even", "ever", "every", "everyone", "everything", "few", "first", "for", "from", "further", "had", "has", "have", "having", "he", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's", "however", "i", "if", "in", "indeed", "instead", "is", "isn't", "it", "it's", "its", "itself", "just", "last", "lately", "let", "let's", "like", "maybe", "me", "meanwhile", "more", "most", "much", "must", "my", "myself", "never", "next", "no", "nobody", "none", "nor", "not", "nothing", "now", "of", "off", "often", "on", "once", "one", "only", "or", "other", "others", "otherwise", "our", "ours", "ourselves", "out", "over", "perhaps", "please", "probably", "quite", "rather", "really", "same", "she", "she's", "should", "since", "so", "some", "somebody", "someone", "something", "sometimes", "soon", "still", "such", "sure", "than", "thank", "thanks", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "there's", "therefore", "these", "they", "they're", "this", "those", "though", "through", "thus", "to", "today", "together", "tomorrow", "tonight", "too", "totally", "under", "until", "up", "us", "usually", "very", "was", "wasn't", "we", "we're", "we've", "well", "were", "what", "what's", "whatever", "when", "where", "which", "while", "who", "who's", "whoever", "whom", "whose", "why", "will", "with", "within", "without", "won't", "would", "yeah", "yes", "yesterday", "yet", "you", "you're", "you've", "your", "yours", "yourself", "yourselves", "absolutely", "actually", "also", "anyway", "aw", "awesome", "bye", "cool", "congrats", "congratulations", "dear", "exactly", "good", "great", "haha", "hello", "hey", "hi", "honestly", "hmm", "lol", "nice", "oh", "ok", "okay", "oops", "right", "sorry", "sounds", "glad", "looks", "wow", "yay", "yep", "yup"])
_TOKEN = re.compile(r"[^\W_][\w'’\-.&]*[^\W_]|[^\W_]|[.!?;:,()\"“”]", re.UNICODE)
_SENTENCE_END = frozenset(".!?;:")
_POSSESSIVE = re.compile(r"['’]s?$", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
MAX_NAME_WORDS = 5


@dataclass(frozen=True, slots=True)
class Mention:
    """A name as written (`name`) and the key its Entity is found by; `kind` is
    'name' or, for a lower-case noun phrase, 'phrase'."""

    key: str
    name: str
    kind: str = "name"


def entity_key(name: str) -> str:
    """The key of a name: Unicode-composed, case-folded, single-spaced, without a
    possessive ending."""
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", name)).strip()
    words = [_POSSESSIVE.sub("", w) if w[-2:].lower() in {"'s", "’s"} or w[-1:] in "'’" else w
             for w in folded.split(" ")]
    return " ".join(w for w in words if w).casefold()


def _capitalised(token: str) -> bool:
    return token[:1].isupper() and token.casefold() not in _NOT_NAMES and not token.isdigit()


def _is_word(token: str) -> bool:
    return token[:1].isalnum()


def mentions(text: str, *, phrases: bool = False) -> list[Mention]:
    """The names `text` mentions (each key once, first spelling kept), in order,
    then (with `phrases`) its salient noun phrases whose keys no name has."""
    names = _names(text)
    if not phrases:
        return names
    taken = {m.key for m in names}
    return names + [m for m in noun_phrases(text) if m.key not in taken]


def _names(text: str) -> list[Mention]:
    tokens = _TOKEN.findall(text)
    found: dict[str, Mention] = {}
    i = 0
    sentence_start = True
    while i < len(tokens):
        token = tokens[i]
        if not _is_word(token):
            sentence_start = token in _SENTENCE_END or (sentence_start and token in "\"“(")
            i += 1
            continue
        if not _capitalised(token):
            sentence_start = False
            i += 1
            continue
        # A run of capitalised words, allowing single lower-case connectors inside.
        j = i + 1
        words = [token]
        while j < len(tokens) and len(words) < MAX_NAME_WORDS:
            nxt = tokens[j]
            if _is_word(nxt) and _capitalised(nxt):
                words.append(nxt)
                j += 1
            elif (nxt in _CONNECTORS and j + 1 < len(tokens) and _is_word(tokens[j + 1])
                  and _capitalised(tokens[j + 1])):
                words += [nxt, tokens[j + 1]]
                j += 2
            else:
                break
        start = i
        if (sentence_start and not token.isupper()
                and entity_key(token) in SENTENCE_OPENERS):
            # A sentence's first word, capitalised by grammar ("Then Alice left").
            start, words = i + 1, words[1:]
            while words and not words[0][:1].isupper():
                start, words = start + 1, words[1:]
        if not words or len(words) == 1 and entity_key(words[0]) in CALENDAR_WORDS:
            pass  # nothing left, or a month or a weekday: a time, not an entity
        elif not _vocative(tokens, start, j):
            name = " ".join(words)
            key = entity_key(name)
            if key and key not in found:
                found[key] = Mention(key=key, name=_POSSESSIVE.sub("", name)
                                     if name[-2:].lower() in {"'s", "’s"} else name)
        sentence_start = False
        i = j
    return list(found.values())


# Words that open a noun phrase: articles, possessives and demonstratives.
_DETERMINERS = frozenset({"a", "an", "the", "my", "your", "his", "her", "its", "our", "their",
                          "this", "that", "these", "those", "some", "any", "every", "each",
                          "another", "no"})
# Generic evaluative and size adjectives: they say how someone felt about a thing,
# not which thing, so a phrase does not start with them.
_GENERIC_ADJECTIVES = frozenset({
    "good", "great", "nice", "new", "old", "big", "little", "small", "large", "huge", "tiny",
    "amazing", "awesome", "beautiful", "lovely", "wonderful", "fun", "hard", "long", "short",
    "whole", "real", "best", "better", "bad", "worst", "favorite", "favourite", "first",
    "last", "next", "same", "different", "special", "perfect", "cool", "fantastic",
    "incredible", "super", "tough", "busy", "quick", "lot", "bit", "kind", "sort", "couple"})
MAX_PHRASE_WORDS = 3


def noun_phrases(text: str) -> list[Mention]:
    """The salient lower-case noun phrases of `text` ("a pottery class", "the
    adoption agencies"), each key once, in order: a run of two or three lower-case
    content words right after a determiner (and the name that may modify it: "a
    LGBTQ support group" holds "support group"), less its leading generic adjectives,
    keyed with the last word singular ("adoption agency"). A single word after a
    determiner ("a dog") is not one: that would make every noun an entity. No
    part-of-speech model: the determiner says a noun phrase starts, a stop word,
    a common verb, punctuation or a name says it ended."""
    from memlattice.core.keyphrases import phrase_key, stop_words

    stop = stop_words()
    tokens = _TOKEN.findall(text)
    found: dict[str, Mention] = {}
    for i, token in enumerate(tokens):
        if token.casefold() not in _DETERMINERS:
            continue
        run: list[str] = []
        start = i + 1
        while start < len(tokens) and start - i <= MAX_NAME_WORDS and _capitalised(
                tokens[start]) and _is_word(tokens[start]):
            start += 1  # a name modifying the phrase ("a LGBTQ support group")
        for word in tokens[start:start + MAX_PHRASE_WORDS + 1]:
            bare = _POSSESSIVE.sub("", word.casefold())
            if (not word[:1].isalpha() or not word.islower() or bare in stop
                    or bare.endswith("ly") or len(bare) < 3):
                break
            run.append(word)
            if word[-2:] in {"'s", "’s"}:
                break
        if len(run) > MAX_PHRASE_WORDS:
            continue  # a clause, not a phrase
        while run and run[0].casefold() in _GENERIC_ADJECTIVES:
            run = run[1:]
        if len(run) >= 2:
            key = phrase_key(run)
            if key and key not in found:
                found[key] = Mention(key=key, name=" ".join(run), kind="phrase")
    return list(found.values())


def _vocative(tokens: list[str], start: int, end: int) -> bool:
    """Whether tokens[start:end], a name, is someone spoken to: right after a
    greeting ("Hey Jon"), set off by a comma at the start of its sentence ("Jon,
    look"), by commas inside it ("Wow, Jon, look"; "thanks, Jon."), or after a
    sentence's opening interjection ("Wow Jon, look"; "Yeah Jon!")."""
    before = tokens[start - 1] if start > 0 else None
    after = tokens[end] if end < len(tokens) else None
    closes = after is None or after == "," or after in _SENTENCE_END
    if before is not None and before.casefold() in _GREETINGS:
        return True
    # A lower-case label's colon introduces a value ("contact: Ines Duarte,
    # manager"); a name's colon is a turn's speaker ("Ben: Lisbon, ..."), after which
    # a sentence starts as anywhere else.
    label = before == ":" and start >= 2 and tokens[start - 2][:1].islower()
    if before is None or (before in _SENTENCE_END and not label):
        return after == ","
    if before == ",":
        return closes
    opener = start < 2 or tokens[start - 2] in _SENTENCE_END
    return opener and _is_word(before) and closes


def query_keys(text: str, max_words: int = 3) -> set[str]:
    """Every key a question could name an entity by: its word runs of up to
    `max_words` words, folded like entity keys, and, for runs of two words or
    more, like noun-phrase keys too (last word singular: "pottery classes" meets
    "pottery class"). A question need not capitalise ("what does melanie
    paint?"): which of these are entities is for the graph to say."""
    from memlattice.core.keyphrases import phrase_key

    words = [w for w in _TOKEN.findall(text) if _is_word(w)]
    keys: set[str] = set()
    for n in range(1, max_words + 1):
        for i in range(len(words) - n + 1):
            key = entity_key(" ".join(words[i:i + n]))
            if key:
                keys.add(key)
                if n > 1:
                    keys.add(phrase_key(words[i:i + n]))
    return keys
