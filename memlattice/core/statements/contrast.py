"""Updates told by what stays and what changes: the second reading, beside frames.

Frames (memlattice.core.statements.extract) read a clause whole, so they miss most
of how people and agents actually word a change ("pg_upgrade finished overnight;
the orders cluster now runs major version 16.2", "Mei took over the storage pager").
Such an update still has three marks that hold in any language of facts:

1. **the same subject**: the same speaker talking of themself, or the same topic
   words (the orders cluster, the storage pager, the exporter) in both memories;
2. **another value of the same kind**: numbers, versions, times, dates, phone
   numbers, addresses, amounts or names (memlattice.core.statements.values) that
   the older memory did not hold;
3. **words of change** in the newer memory ("now", "switched", "took over", "no
   longer": memlattice.core.statements.change_words): English marks a new state
   with them.

All three are required (precision first: two memories of one topic that name two
different numbers are, without a word of change, as likely two facts as one fact
twice), and the two are not of one conversation (`contrast`); a question, a plan, a
condition or an addition ("also", "another") is never an update. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memlattice.core.entities import CALENDAR_WORDS, SENTENCE_OPENERS, entity_key, mentions
from memlattice.core.query_words import is_stop_word
from memlattice.core.statements.change_words import (
    PARTICLE_CHANGE,
    WEAK_CHANGE,
    hypothetical,
    is_strong,
    new_of_someone,
    plans_follow,
    starts_now,
)
from memlattice.core.statements.compare import Verdict
from memlattice.core.statements.edits import EDIT_MARKS, read_edits
from memlattice.core.statements.lexicon import COUNT_WORDS
from memlattice.core.statements.readings import dimension, reading_of
from memlattice.core.statements.states import (
    State,
    about_others_only,
    home_places,
    states_of,
)
from memlattice.core.statements.tokens import stem
from memlattice.core.statements.values import (
    calendar_date,
    normalise,
    not_speakers,
    same_names,
    value_kind,
)

# Words that add one more of something rather than replace it.
ADDITIVE = frozenset({"also", "another", "additionally", "extra", "both", "second", "third"})
# Units of duration and distance: a number before one is an age, a length of time or
# a mileage, not a value of the subject's attribute.
_UNITS = frozenset({"year", "years", "month", "months", "week", "weeks", "day", "days",
                    "hour", "hours", "minute", "minutes", "min", "mins", "second",
                    "seconds", "s", "km", "miles", "mi", "times", "x", "percent", "%",
                    "h", "evenings", "nights", "mornings"})
# Weekdays as people abbreviate them ("last Fri"); "Sat" and "Sun" are words too.
_WEEKDAY_ABBREVIATIONS = frozenset({"mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri"})
# Parts of host names and addresses that name no service.
_GENERIC_HOST = frozenset({"com", "net", "org", "www", "http", "https", "internal", "local",
                           "localhost", "corp", "prod", "dev", "svc", "cluster", "gmail",
                           "outlook", "mail"})
# Words that date a past event by a weekday or a month ("last Friday", "past May").
_EVENT_TIME = frozenset({"last", "past"})
_WORD = re.compile(r"\+?\d[\d\-().]*(?: \d[\d\-()]{2,})+|[\w$€£+][\w$€£'@+\-./:]*[\w%]"
                   r"|[\w$€£]|[?.!;,:]", re.UNICODE)
_CLAUSE_BREAKS = frozenset({".", "!", "?", ";", ",", "so", "because", "but", "and", "while",
                            "although", "though"})
_DIGIT = re.compile(r"\d")
_DETERMINERS = frozenset({"the", "our", "my", "this", "that", "their", "your", "its"})
# Codes of letters and digits in lower case ("eu-west-1", "us-east-2", "gpt-4o"):
# names of a region, a model or a plan, compared as names are, not as numbers
# (upper case, "CHG-5521", "ATLAS-204", is a ticket's identifier).
_CODE = re.compile(r"^[a-z]{2,}(?:-[a-z0-9]+)*-[a-z]*\d[a-z0-9]*$")
# Prepositions that give a name its role in the speaker's life.
_ROLES = frozenset({"at", "in", "for", "with", "from"})
# Identifiers: a value both memories state names what they are about ("the 3.0
# release"), not what changed.
_IDENTIFIERS = frozenset({"version", "host", "email"})
# Kinds of value a speaker has one of without naming the topic: their email, their
# phone number, how many of a thing they have (the thing counted is the topic).
_SPEAKERS_OWN = frozenset({"email", "phone", "count"})


@dataclass(frozen=True, slots=True)
class Profile:
    """What a memory says, as the contrast reading needs it."""

    voice: str | None
    first_person: bool
    topic: frozenset[str]
    # The topic's words as written (the fulltext index is asked for them).
    topic_words: frozenset[str]
    # Numbers in the subject's place ("build 1412 passed"): which one it is about.
    ids: frozenset[str]
    values: tuple[tuple[str, str], ...]  # (kind, value)
    change: tuple[str, ...]
    additive: bool
    blocked: bool
    # Names that open a sentence ("Kenji handed ..."): the sentence's subject, so
    # topic, not a value; but the older memory may have stated it as its value.
    lead: frozenset[str] = frozenset()
    # Values shortly after "to", "into" or "onto", and names after a word of change
    # in its sentence: where a change leads ("changed to 9200", "bumped to Node 22",
    # "switched banks, now with Monzo"); a bare number, a reading or a name is new
    # only there (or, for a name, where the old one is named again).
    targets: frozenset[str] = frozenset()
    # States the speaker names of themself ("I'm single", "fully plant-based").
    states: frozenset[State] = frozenset()
    # Places a first-person memory names as the speaker's home.
    homes: frozenset[str] = frozenset()
    # It speaks of someone else ("my brother", "she") and never of its speaker.
    others_only: bool = False
    # Whole names, word by word ("ines duart"): "Kenji" is "Kenji Sato", "Lyon" is
    # not "Gare de Lyon".
    full_names: frozenset[tuple[str, ...]] = frozenset()
    # Names with the preposition that gives their role ("at Festo", "in Esslingen").
    roles: frozenset[tuple[str, str]] = frozenset()

    def search_words(self) -> frozenset[str]:
        """The words an earlier memory of the same subject would hold: the topic's
        words as written and the identifiers it names ("v3", "new_checkout")."""
        return self.topic_words | {t.lstrip("#") for t in self.topic
                                   if t.startswith("#") or "_" in t}

    def kinds(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for kind, value in self.values:
            out.setdefault(kind, set()).add(value)
        return out


def _clauses(raw: list[str], *, every: bool = False) -> list[list[tuple[str, bool]]]:
    """Clauses of (token, whether it starts a sentence), without those that only
    consider a value: English capitalises a sentence's first word, so only a
    capital elsewhere marks a name; and a label that plans ("Action items:",
    "Proposal:") governs its sentence's clauses after the colon."""
    out: list[list[tuple[str, bool]]] = [[]]
    planned = [False]
    starts = True
    for tok in raw:
        if tok.lower() in _CLAUSE_BREAKS or tok == ":":
            words = [w.lower() for w, _ in out[-1]]
            if tok == "?":
                out[-1] = [("?", False)]  # a question asserts nothing
            out.append([])
            # (after a colon a capital is as often a name: "lead: Ines")
            starts = tok in {".", "!", "?", ";"}
            planned.append(tok not in {".", "!", "?"} and planned[-1]
                           or tok == ":" and plans_follow(words))
        else:
            out[-1].append((tok, starts))
            starts = False
    return [c for c, plan in zip(out, planned) if c and c != [("?", False)] and (
        every or not plan and not hypothetical([w.lower() for w, _ in c]))]


@lru_cache(maxsize=4096)
def profile(text: str, *, speaker: str | None) -> Profile:
    """Read `text` (said by `speaker`, an entity key, if anyone), clause by clause:
    a question or a clause that only considers a value contributes nothing. Cached:
    a memory is read for its statements and again for contrast, and the same
    earlier memories are candidates of write after write."""
    edits = read_edits(text.replace("’", "'"))
    raw = _WORD.findall(edits.text)
    # Names are what memlattice.core.entities reads as mentioned: a name spoken to
    # someone ("Thanks, Mel!", "Hey Jon") says who listens, not a value.
    said = [entity_key(m.name).split() for m in mentions(text)]
    full = [tuple(stem(w) for w in words) for words in said]
    named = frozenset(w for words in said for w in words)
    kept = _clauses(raw)
    low_all = [w.lower() for w in raw]
    first = any(w in {"i", "we", "i'm", "we're", "i've", "we've", "my", "our", "me", "us"}
                for w in low_all)
    values: list[tuple[str, str]] = []
    topic: set[str] = set()
    topic_words: set[str] = set()
    ids: set[str] = set()
    change: list[str] = list(edits.marks)
    additive = False
    lead: set[str] = set()
    targets: set[str] = set(edits.targets)
    roles: set[tuple[str, str]] = set()
    names_by_clause: list[tuple[list[str], list[str]]] = []
    changed_here = False  # a word of change came earlier in this sentence
    for clause in kept:
        low = [w.lower() for w, _ in clause]
        names_by_clause.append((low, []))
        changed_here = changed_here and not clause[0][1]
        if starts_now(low):
            change.append("from now on")
        for i, (w, (o, initial)) in enumerate(zip(low, clause)):
            nxt = low[i + 1] if i + 1 < len(low) else ""
            if (is_strong(w, low[i + 1:i + 6]) or w in WEAK_CHANGE
                    or w == "new" and i and new_of_someone(low[i - 1])) and (
                    initial or not o[:1].isupper()):  # "Becoming Nicole" is a title
                particle = PARTICLE_CHANGE.get(w, set()) & set(low[i + 1:i + 6])
                change.append(f"{w} {min(particle)}" if particle else w)
                changed_here = True
            # "too" adds at a clause's end ("a dog too"), not before a word ("too slow").
            additive = additive or w in ADDITIVE or (w == "too" and i == len(low) - 1)
            if _DIGIT.search(w) and i > 0 and (
                    low[i - 1] in _DETERMINERS or (i == 1 and clause[0][1])):
                # "Build 1412 passed", "the 3.0 release": the subject's number, not a value
                ids.add(w)
                topic.add("#" + w)
                continue
            if i and low[i - 1] in _EVENT_TIME and (
                    w in CALENDAR_WORDS or w in _WEEKDAY_ABBREVIATIONS):
                continue  # "last Friday": when something happened, not a value of it
            day = calendar_date(w, nxt) or (calendar_date(w, low[i - 1]) if i else None)
            if day:  # "March 19", "19 March", "2026-03-19": one day of the year
                if not values or values[-1] != ("date", day):
                    values.append(("date", day))
                continue
            value = _value(w, o, nxt, first_word=initial, speaker=speaker, named=named)
            if value is not None:
                if value[0] != "skip" and {"to", "into", "onto"} & set(low[max(0, i - 3):i]):
                    targets.add(value[1])  # "moved to Lyon", "to Node 22": a new value
                if value[0] in _IDENTIFIERS:
                    topic.add("#" + value[1])  # an identifier both name is a shared subject
                if value[0] in {"host", "email"}:
                    # A host's words name the service: auth.internal.acme.net, auth-v2...
                    topic.update(p for p in re.split(r"[.\-:/@]", value[1].lower())
                                 if p.isalpha() and len(p) > 2 and p not in _GENERIC_HOST)
                if value[0] != "skip":
                    values.append(value)
                if value[0] == "name":
                    if changed_here and i or is_strong(nxt, low[i + 2:i + 7]):
                        # "sold the Golf and got a Tesla", "Bruno took over"; not
                        # "switched it, Marek said", who opens a clause of its own
                        targets.add(value[1])
                    names_by_clause[-1][1].append(entity_key(o))
                    role = low[i - 2] if i > 1 and low[i - 1] in _DETERMINERS else (
                        low[i - 1] if i else "")
                    if role in _ROLES:
                        roles.add((role, value[1]))
            else:
                if "_" in w.strip("_") and any(c.isalpha() for c in w):
                    topic.add(w)  # an identifier (new_checkout, ORDERS_DB_URL) is a subject
                if initial and o[:1].isupper() and entity_key(o) in named:
                    lead.add(stem(w))
                # A compound's parts each name the topic ("search-indexer", "indexer").
                for part in w.split("-"):
                    if (part.isalpha() and len(part) > 2 and not is_stop_word(part)
                            and part not in SENTENCE_OPENERS and not is_strong(part)
                            and part not in WEAK_CHANGE and part not in ADDITIVE):
                        topic.add(stem(part))
                        topic_words.add(part)
    return Profile(voice=speaker, first_person=first, topic=frozenset(topic),
                   topic_words=frozenset(topic_words), ids=frozenset(ids),
                   values=tuple(values), change=tuple(change), additive=additive,
                   lead=frozenset(lead), targets=frozenset(targets), roles=frozenset(roles),
                   full_names=frozenset(n for n in full if n),
                   # (states read every clause: their own words say what is elsewhere)
                   states=states_of([[w.lower() for w, _ in c]
                                     for c in _clauses(raw, every=True)]),
                   homes=home_places(names_by_clause, first),
                   others_only=about_others_only([[w.lower() for w, _ in c] for c in kept]),
                   blocked=not kept or edits.offer)


def _value(w: str, o: str, nxt: str, *, first_word: bool, speaker: str | None,
           named: frozenset[str]) -> tuple[str, str] | None:
    """A token's (kind, value) if it states one; ("skip", "") for a number that is a
    duration or a year; None for a word."""
    if _DIGIT.search(w):
        if nxt in _UNITS or (len(w) == 4 and w.isdigit() and w.startswith(("19", "20"))):
            return "skip", ""
        kind = value_kind([w] + ([nxt] if nxt in {"am", "pm"} else []), [o])
        if kind in {"name", "text", "number"} and (reading := reading_of(w, nxt)):
            return "reading", reading  # "hit rate 87%", "41 GB", "p95 240ms"
        if kind == "time":  # "06:30" and "6:30" are one time
            return kind, normalise([w.strip(".,")], kind)
        if kind in {"name", "text"} and _CODE.match(w) and o.islower():
            return "code", w  # "eu-west-1", "gpt-4o": a code names a thing, as a name does
        return ("number" if kind in {"name", "text"} else kind), w.strip(".,")
    if "@" in w or "://" in w or "." in w.strip("."):
        kind = value_kind([w.strip(".,")], [o])  # an address: email, URL or host name
        if kind in {"email", "host"}:
            return kind, w.strip(".,")
    count, _, counted = w.partition("-")
    if count in COUNT_WORDS and counted.isalpha() and not is_stop_word(counted) \
            and counted not in _UNITS and count not in {"a", "an", "second", "third"}:
        return "count", f"{COUNT_WORDS[count]} {stem(counted)}"  # "a three-cat household"
    if w in COUNT_WORDS and w not in {"a", "an", "second", "third", "couple", "pair"} \
            and nxt.isalpha() and nxt not in _UNITS and not is_stop_word(nxt):
        # How many of what; "Three now." leaves out what, which the older memory said.
        return "count", f"{COUNT_WORDS[w]} {'' if nxt in WEAK_CHANGE else stem(nxt)}"
    if w in CALENDAR_WORDS or w in _WEEKDAY_ABBREVIATIONS:
        return "when", w
    if (o[:1].isupper() and not first_word and w not in SENTENCE_OPENERS
            and "_" not in w.strip("_")  # ORDERS_DB_URL names a setting: topic
            and not w.startswith("i'") and w != "i"
            and (speaker is None or entity_key(o) != speaker)):
        # "Sara's birthday" names Sara
        return ("name", stem(w.removesuffix("'s").rstrip("'"))) if entity_key(o) in named \
            else ("skip", "")
    return None


def _same_role(older: Profile, newer: Profile) -> bool:
    """Whether both speak of themselves and name another thing in one role ("I'm an
    engineer at Festo", "my first day at Trumpf"): the same slot of their life."""
    return older.first_person and newer.first_person and any(
        role == other_role and name != other
        for role, name in older.roles for other_role, other in newer.roles)


def contrast(older: Profile, newer: Profile, *, same_source: bool,
             participants: frozenset[str] = frozenset(),
             same_conversation: bool = False) -> Verdict | None:
    """An update of `older` by `newer` when all three marks hold (module docstring);
    `participants`: everyone known to speak where the two were said. Never within one
    conversation (`same_conversation`): another value a few turns on is mostly another
    option, item or detail under discussion, even where both are named ("Oslo or
    Bergen? ... Bergen, not Oslo"), not a state that changed."""
    if older.blocked or newer.blocked or not newer.change or same_conversation:
        return None
    old_kinds, new_kinds = older.kinds(), newer.kinds()
    # Who speaks is who, not what: a speaker's name, or a short form of it ("Mel"
    # of Melanie), is no value of theirs.
    # So is anyone else who speaks there: "Thanks, Gina - really appreciate it" names
    # who listens, whether or not the comma that marks a vocative is there.
    subjects = {stem(w) for voice in (older.voice, newer.voice, *participants) if voice
                for w in voice.split()}
    shared = set(older.topic & newer.topic)
    # A name both state is who both are about ("Ines Duarte ... Lisbon office", "Ines
    # Duarte relocated to ... Porto"), not a value: who moved, not where to.
    named_both = not_speakers(same_names(older.full_names, newer.full_names), subjects)
    if older.ids and newer.ids and not older.ids & newer.ids:
        return None  # build 1412 and build 1413: two subjects
    strong = any(is_strong(w) or w in EDIT_MARKS for w in newer.change)
    if older.first_person and not older.others_only and newer.others_only:
        return None  # the speaker's fact, then someone else's: two subjects
    same_speaker = ((older.first_person or newer.first_person) and older.voice is not None
                    and older.voice == newer.voice)
    if not shared and not same_speaker and not named_both:
        return None
    for kind in ("version", "host", "email", "phone", "money", "time", "when", "weekday",
                 "date", "code", "count", "number", "reading", "name"):
        before, after = old_kinds.get(kind), new_kinds.get(kind)
        if kind == "name" and before and after:  # a speaker's name is who, not what
            before, after = not_speakers(before, subjects), not_speakers(after, subjects)
        if not before or not after:
            continue
        restated = before & (after | newer.lead) if kind == "name" else before & after
        if kind == "name":  # who both are about is not what changed
            before, after = before - named_both, after - named_both - older.lead
        fresh = after - before
        if kind in {"reading", "number"}:  # a bare number changes where a change leads to it
            fresh &= newer.targets
        if kind == "reading":  # and a reading only to another of the same measure
            measured = {dimension(b) for b in before}
            fresh = {v for v in fresh if dimension(v) in measured}
        elif kind == "name" and not (restated or _same_role(older, newer)):
            fresh &= newer.targets  # a topic names many; the new one is where it leads
        if kind == "count":  # "two rabbits" -> "three rabbits"; not "three" -> "four people"
            counted = {c.split(" ", 1)[1] for c in before}
            fresh = {c for c in fresh if c.split(" ", 1)[1] in counted | {""}}
        if not fresh or not (before or restated and shared):
            # nothing new; or only the name both are about and no topic to say it was
            # in the same role ("Kenji maintains the indexer")
            continue
        if not (shared or kind == "name" and (named_both or _same_role(older, newer))) \
                and kind not in _SPEAKERS_OWN:
            continue  # one speaker states many numbers, names and times
        if kind in {"name", "count"} and newer.additive:
            return None  # "we also adopted a dog": one more, not another
        if kind == "name" and not ((shared or named_both) and (same_speaker or strong)
                                   or same_speaker and strong and _same_role(older, newer)):
            continue  # a new name needs its topic, and its owner talking or a replacement
        # The newer memory naming the older value again ("Kenji handed it over to
        # Fatima", "swapped with Bob") says which state it replaces.
        confidence = (0.6 + 0.05 * min(len(shared), 4) + (0.1 if same_source else 0.0)
                      + (0.05 if strong else 0.0) + (0.1 if restated else 0.0))
        what = f"{min(restated or before)!r} -> {min(fresh)!r}"  # the one said again
        about = ", ".join(sorted(shared)[:4]) or newer.voice or ""
        return Verdict(
            kind="update", confidence=round(min(confidence, 0.9), 2),
            reason=f"another {kind} for the same subject ({about}): {what};"
                   f" change said by {', '.join(dict.fromkeys(newer.change))}",
            subject=about, attribute=kind,
            matched=tuple(dict.fromkeys([*sorted(shared)[:6], *sorted(before)[:2],
                                         *sorted(fresh)[:2], *newer.change[:3]])))
    return None
