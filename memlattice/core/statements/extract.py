"""Statements of fact in a memory's text: who, which attribute, which value.

"I live in Bergen", "Ines moved to Porto", "my number is 555-0101", "the
metrics exporter listens on 9100", "we have three rabbits now": each asserts a
value of an attribute of a subject, and a later memory that asserts another
value of the same attribute of the same subject updates it
(memlattice.core.statements.compare). No model is involved; the rules read
English clause structure:

1. the text is cut into clauses (sentences, and "but/and" before a new subject);
   a question, or a clause that only considers a value (a plan, a wish, a
   condition, the future, reported speech: lexicon.IRREALIS), asserts nothing;
2. the subject is the clause's first noun phrase after discourse words and a
   leading time a state starts at (memlattice.core.statements.openings): the
   speaker ("I", "we"), a possessive noun phrase ("my number": the speaker's
   number; "my sister": another subject, the speaker's sister), a name ("Ines",
   "Ines's phone"), or a thing ("the metrics exporter"); a pronoun the rules
   cannot resolve ("she", "it") ends the clause;
3. the predicate: a relation frame (lexicon.FRAMES: live in, work at, listen on),
   a verb of having with a count ("three rabbits"), the copula ("X is Y"), or a
   verb of change with "to" ("moved to Thursday"); the last two take the
   attribute from the value's kind (memlattice.core.statements.values);
4. the value runs to the first word that starts an adjunct (lexicon.VALUE_STOPS)
   or a length of time (memlattice.core.statements.phrases).

A line "label: value" of notes and logs ("New phone number: 0151 234 5678",
"Standup: 10:30") reads as "label is value" when the value is one typed value;
a clause after a label is read as it stands ("Update: the standup moved to
Thursday"); a name or free text after a label is a note, and states nothing.

Precision comes first: a clause the rules cannot read whole gives no statement.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memlattice.core.entities import CALENDAR_WORDS, SENTENCE_OPENERS, entity_key
from memlattice.core.statements import lexicon as lx
from memlattice.core.statements.labels import is_label, labelled
from memlattice.core.statements.openings import skip_opening as _skip_opening
from memlattice.core.statements.phrases import is_name, is_verb, noun_phrase, value_words
from memlattice.core.statements.tokens import POSS as _POSS
from memlattice.core.statements.tokens import clauses as _clauses
from memlattice.core.statements.tokens import stem
from memlattice.core.statements.tokens import tokens as _tokens
from memlattice.core.statements.values import (
    KIND_ATTRIBUTE,
    normalise,
    product_of,
    value_kind,
)


@dataclass(frozen=True, slots=True)
class Statement:
    """One asserted value of one attribute of one subject.

    `owner`: the entity key of whose attribute it is (the speaker, a name, "alice's
    sister"), or None for a thing nobody is said to own ("the standup");
    `thing`: the stemmed words of the noun phrase the attribute belongs to
    ("phone number", "rabbit", "metric export"), empty for a relation of the owner
    itself (where they live); `attribute`: the relation ("residence", "count",
    "when", ...); `value`: its comparable form; `negated`: the clause denies it
    ("not anymore"); `change`: the clause says something changed ("now", "moved");
    `words`: the words that carried subject, predicate and value, for the reason
    a link gives; `shown`: the value as written ("11:00" for the value "11"), for
    the reason too, and not compared."""

    owner: str | None
    thing: tuple[str, ...]
    attribute: str
    value: str
    kind: str
    negated: bool = False
    change: bool = False
    framed: bool = False
    words: tuple[str, ...] = ()
    thing_text: str = ""
    shown: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        """What a candidate look-up keys on: the attribute and the thing's last word
        (subjects and things are compared in full afterwards)."""
        return f"{self.attribute}|{self.thing[-1] if self.thing else ''}"


@dataclass
class _Clause:
    """A clause being read: its tokens and what has been found so far."""

    tokens: Sequence[tuple[str, str]]
    owner: str | None
    thing: list[str]
    # self ("I"), kin ("my sister"), name ("Ines"), owned ("my number", "Ines's
    # phone") or thing ("the standup")
    subject: str
    negated: bool = False

    @property
    def person(self) -> bool:
        return self.subject in {"self", "kin", "name"}

    def irrealis(self, end: int) -> bool:
        return any(w in lx.IRREALIS for w, _ in self.tokens[:end])

    def change(self) -> bool:
        return any(w in lx.CHANGE_CUES or stem(w) in lx.CHANGE_VERBS for w, _ in self.tokens)

    def occasion(self) -> bool:
        """Whether the clause is tied to one occasion ("today", "this morning"), not to
        the start of a state ("as of today", "starting tonight") or to now."""
        words = [w for w, _ in self.tokens]
        if "now" in words:
            return False
        return any((w in lx.OCCASIONS or (w in {"this", "last"} and nxt in lx.OCCASION_PARTS))
                   and before not in lx.STATE_STARTS
                   for before, w, nxt in zip(["", *words], words, [*words[1:], ""]))


def extract(text: str, *, speaker: str | None = None) -> list[Statement]:
    """The statements of `text`; first-person ones are the `speaker`'s (an entity
    key; without one they are none of anyone's, and are skipped)."""
    tokens = _tokens(text)
    out: list[Statement] = []
    for clause, question in _clauses(tokens):
        if question:
            continue
        found = _statement(clause, speaker)
        if found is not None:
            out.append(found)
    return out


def _statement(clause: Sequence[tuple[str, str]], speaker: str | None) -> Statement | None:
    colon = next((k for k, (w, _) in enumerate(clause) if w == ":"), None)
    if colon is None:
        return _read(clause, speaker)
    label, rest = clause[:colon], [t for t in clause[colon + 1:] if t[0] != ":"]
    if rest and is_label(label):
        return labelled(label, rest, speaker, _read)
    return _read([t for t in clause if t[0] != ":"], speaker)


def _read(clause: Sequence[tuple[str, str]], speaker: str | None) -> Statement | None:
    i = _skip_opening(clause)
    if i >= len(clause):
        return None
    w, o = clause[i]
    if w in lx.FIRST_PERSON:
        if speaker is None:
            return None
        read = _Clause(clause, speaker, [], "self")
        i += 1
    elif w.endswith("ed") and is_verb(w) and (i == 0 or clause[i - 1][0] != ","):
        # "finally moved to Porto", "Switched to the night shift": English drops the
        # subject of a past-tense sentence one tells of oneself; whose it is, is the voice's.
        if speaker is None:
            return None
        read = _Clause(clause, speaker, [], "self")
    elif w in lx.FIRST_POSSESSIVE:
        if speaker is None:
            return None
        np, j = noun_phrase(clause, i + 1)
        if not np:
            return None
        if j < len(clause) and (clause[j][0] in lx.COPULA or clause[j][0] in lx.AUXILIARIES):
            read = _Clause(clause, speaker, np, "owned")
        else:  # "my sister lives in Oslo": the sister is the subject
            read = _Clause(clause, f"{speaker}'s {' '.join(np)}", [], "kin")
        i = j
    elif w in lx.UNRESOLVED:
        return None
    elif is_name(w, o, i == 0 or clause[i - 1][0] == ","):
        j = i
        while j < len(clause) and clause[j][1][:1].isupper() and clause[j][0] != _POSS:
            j += 1
        name = entity_key(" ".join(o for _, o in clause[i:j]))
        if j < len(clause) and clause[j][0] == _POSS:
            np, j = noun_phrase(clause, j + 1)
            if not np:
                return None
            read = _Clause(clause, name, np, "owned")
        else:
            read = _Clause(clause, name, [], "name")
        i = j
    else:
        np, j = noun_phrase(clause, i)
        if not np or np[0] in SENTENCE_OPENERS or np[0] in lx.IRREALIS:
            return None
        read = _Clause(clause, None, np, "thing")
        i = j
    return _predicate(read, i)


def _verb_at(read: _Clause, i: int) -> int:
    """Where the main verb is: past auxiliaries and adverbs (a negation among them
    marks the clause negated); "have" before a count is the verb itself."""
    clause = read.tokens
    for j in range(i, len(clause)):
        w, nxt = clause[j][0], clause[j + 1][0] if j + 1 < len(clause) else ""
        if w in lx.NEGATIONS:
            read.negated = True
            continue
        counted = nxt in lx.COUNT_WORDS or nxt.isdigit() or nxt == "another"
        progressive = w in {"am", "are", "is"} and nxt.endswith("ing")
        if (w in lx.HAVE_VERBS and counted) or (
                w not in lx.AUXILIARIES and w != "," and not progressive):
            return j
    return len(clause)


def _predicate(read: _Clause, i: int) -> Statement | None:
    clause = read.tokens
    i = _verb_at(read, i)
    if i >= len(clause):
        return None
    verb, _ = clause[i]
    s = stem(verb)
    prep = clause[i + 1][0] if i + 1 < len(clause) and clause[i + 1][0] in lx.PREPOSITIONS \
        else None
    frame = lx.FRAMES.get((s, prep)) or lx.FRAMES.get((s, None))
    if frame is None and verb in {"is", "are", "was", "were"} and i + 1 < len(clause):
        # "we're based in Oslo", "the API is hosted at ...": a passive participle's frame
        nxt = stem(clause[i + 1][0])
        after = clause[i + 2][0] if i + 2 < len(clause) else None
        frame = lx.FRAMES.get((nxt, after)) if after in lx.PREPOSITIONS else None
        if frame is not None:
            i, prep = i + 1, after
    if frame is not None and not _fits(frame, read):
        frame = None
    if frame is not None:
        start = i + (2 if prep is not None and lx.FRAMES.get((s, prep)) == frame else 1)
        return _finish(read, frame, start, [verb] + ([prep] if prep else []), framed=True)
    if verb in lx.HAVE_VERBS or s in {"adopt", "bought", "buy", "own", "keep", "kept", "got"}:
        return _possession(read, i)
    if s in lx.OBJECT_FRAMES and read.person and prep is None:
        return _finish(read, lx.OBJECT_FRAMES[s], i + 1, [verb], framed=True, named=True)
    if verb in lx.COPULA and read.thing:
        if verb == "'s" and any(w in lx.COPULA for w, _ in clause[i + 1:]):
            return None  # "ledgerd's metrics exporter was noisy": a possessive, not "is"
        return _finish(read, None, i + 1, [verb])
    if verb in lx.COPULA and read.person and prep == "on":
        return _finish(read, None, i + 2, [verb, "on"], versions_only=True)
    if s in lx.CHANGE_VERBS:
        to = next((k for k in range(i + 1, min(i + 5, len(clause))) if clause[k][0] == "to"),
                  None)
        if to is not None:
            return _finish(read, None, to + 1, [verb, "to"], change=True,
                           versions_only=read.person and not read.thing)
    return None


_NAMED_FRAMES = frozenset({"residence", "employer", "school", "partner"})


def _name_after(clause: Sequence[tuple[str, str]], i: int) -> str | None:
    """The first name (a capitalised word) in the rest of the clause."""
    for w, o in clause[i:]:
        if w == ",":
            return None
        if o[:1].isupper() and w not in CALENDAR_WORDS and w not in lx.UNRESOLVED:
            return o
    return None


def _fits(frame: str, read: _Clause) -> bool:
    """Whether a frame is about this kind of subject (lexicon.PERSON_FRAMES,
    THING_FRAMES); a name may be a person's or a thing's."""
    if frame in lx.PERSON_FRAMES and read.subject in {"self", "kin", "name"}:
        return True
    return frame in lx.THING_FRAMES and read.subject in {"name", "thing", "owned"}


def _finish(read: _Clause, frame: str | None, start: int, verb: list[str], *,
            framed: bool = False, change: bool = False, versions_only: bool = False,
            named: bool = False) -> Statement | None:
    low, orig, end = value_words(read.tokens, start)
    if not low or read.irrealis(end):
        return None
    kind = value_kind(low, orig)
    if frame in _NAMED_FRAMES and kind != "name":
        # Places, employers and partners are named: "settled into our flat in Tromsø".
        place = _name_after(read.tokens, end)
        if place is not None:
            low, orig, kind = [place.lower()], [place], "name"
    if frame == "employer" and stem(verb[0]) == "join" and kind != "name":
        return None  # one joins a gym, a group, a class too; an employer is named
    if frame is None and kind == "text" and low[0] in lx.EVALUATIVE:
        return None  # "the colours are so bold": an opinion, and opinions coexist
    thing = tuple(stem(w) for w in read.thing)
    if frame is None:
        if versions_only and kind != "version":
            return None
        if kind == "version" and not thing:
            thing = tuple(stem(w) for w in product_of(low, orig))
            low = [t for t in low if any(ch.isdigit() for ch in t)]
            if not thing or not low:
                return None
        attribute = KIND_ATTRIBUTE.get(kind, "value")
        if attribute == "value" and not read.thing:
            return None
    else:
        attribute = frame
    if named and kind not in {"name", "version"}:
        return None
    if frame is None and not change and read.occasion() and not read.change():
        return None  # "the session cache was slow yesterday": an occasion, not a value
    value = normalise(low, kind)
    if not value:
        return None
    shown = (" ".join(o for o, t in zip(orig, low) if t not in lx.DETERMINERS)
             if len(orig) == len(low) else value)
    return Statement(owner=read.owner, thing=thing, attribute=attribute, value=value, kind=kind,
                     negated=read.negated, change=change or read.change(), framed=framed,
                     words=(*read.thing, *verb, *low), shown=shown,
                     thing_text=" ".join(read.thing) if read.thing else " ".join(
                         o for o in orig if o[:1].isupper())[:60] if thing else "")


def _possession(read: _Clause, i: int) -> Statement | None:
    """"we have three rabbits": the count of a kind of thing the owner has."""
    if not read.person or read.thing:
        return None
    clause = read.tokens
    count: str | None = None
    j = i + 1
    while j < len(clause) and (clause[j][0] in lx.COUNT_WORDS or clause[j][0].isdigit()
                               or clause[j][0] in lx.DETERMINERS or clause[j][0] == "another"
                               or clause[j][0] == "of"):
        w = clause[j][0]
        if w == "another":
            count = "more"
        elif w.isdigit():
            count = w
        elif w in lx.COUNT_WORDS and count != "more":
            count = str(max(lx.COUNT_WORDS[w], int(count) if count and count.isdigit() else 0))
        j += 1
    np, end = noun_phrase(clause, j)
    if count is None or not np or read.irrealis(end):
        return None
    head = stem(np[-1])
    ordinal = any(w in {"second", "third", "fourth", "fifth", "another"}
                  for w, _ in clause[i:j])
    return Statement(owner=read.owner, thing=(head,), attribute="count", value=count,
                     kind="number", negated=read.negated,
                     change=ordinal or read.change()
                     or stem(clause[i][0]) in {"adopt", "got", "get", "bought", "buy"},
                     words=(clause[i][0], *[w for w, _ in clause[i + 1:end]]),
                     thing_text=np[-1])
