"""Words of a statement's text: tokens with contractions expanded, clauses, stems.

Pure: no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

from memlattice.core.statements import lexicon as lx

_STEMMER = snowballstemmer.stemmer("porter")
# A colon inside a word is part of it ("10:30", "https://..."); one after a word is
# a token of its own, which ends a label ("Phone number: ...").
# A number with thousands separators ("16,100", "$1,250.50") is one word.
_TOKEN = re.compile(r"[$€£]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?(?![\w,])"
                    r"|[\w$€£+][\w$€£'@+\-./:]*[\w%]|[\w$€£]|[.!?;,:]", re.UNICODE)
_PRONOUN_IS = frozenset({"it", "he", "she", "that", "what", "there", "here", "who", "where",
                         "this", "let"})
POSS = "'s"

@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    return str(_STEMMER.stemWord(word.lower()))


def tokens(text: str) -> list[tuple[str, str]]:
    """(lower case, as written) tokens, contractions expanded ("I'm" -> I am,
    "don't" -> do not), a possessive 's kept as its own token."""
    out: list[tuple[str, str]] = []
    for raw in _TOKEN.findall(text.replace("’", "'")):
        low = raw.lower()
        for ending, full in (("n't", "not"), ("'m", "am"), ("'re", "are"), ("'ve", "have"),
                             ("'ll", "will"), ("'d", "would")):
            if low.endswith(ending) and len(low) > len(ending):
                base = raw[: -len(ending)]
                if ending == "n't":
                    base = {"ca": "can", "wo": "will", "sha": "shall"}.get(base.lower(), base)
                out += [(base.lower(), base), (full, full)]
                break
        else:
            if low.endswith(("'s", "'")) and len(low) > 2:
                base = raw[:-2] if low.endswith("'s") else raw[:-1]
                out.append((base.lower(), base))
                out.append(("is", "is") if base.lower() in _PRONOUN_IS else (POSS, POSS))
            else:
                out.append((low, raw))
    return out


def clauses(tokens: list[tuple[str, str]]) -> list[tuple[list[tuple[str, str]], bool]]:
    """Clauses with whether their sentence is a question."""
    sentences: list[tuple[list[tuple[str, str]], bool]] = []
    current: list[tuple[str, str]] = []
    for tok in tokens:
        if tok[0] in {".", "!", "?", ";"}:
            if current:
                sentences.append((current, tok[0] == "?"))
            current = []
        else:
            current.append(tok)
    if current:
        sentences.append((current, False))
    clauses: list[tuple[list[tuple[str, str]], bool]] = []
    for sentence, question in sentences:
        start = 0
        for i in range(1, len(sentence) - 1):
            # "..., but we moved to Oslo": a conjunction before a new subject starts a clause.
            if sentence[i][0] in {"but", "and", "so", "because"} and (
                    sentence[i + 1][0] in lx.FIRST_PERSON | lx.FIRST_POSSESSIVE):
                clauses.append((sentence[start:i], question))
                start = i + 1
        clauses.append((sentence[start:], question))
    return [(c, q) for c, q in clauses if c]


