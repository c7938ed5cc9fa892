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
   longer": `STRONG_CHANGE`, `_REPLACING_VERBS`, `WEAK_CHANGE`): English marks a
   new state with them.

All three are required (precision first: two memories of one topic that name two
different numbers are, without a word of change, as likely two facts as one
fact twice); a question, a plan, a condition or an addition ("also", "another")
is never an update. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlattice.core.entities import CALENDAR_WORDS, SENTENCE_OPENERS, entity_key
from memlattice.core.query_words import is_stop_word
from memlattice.core.statements.compare import Verdict
from memlattice.core.statements.lexicon import COUNT_WORDS
from memlattice.core.statements.tokens import stem
from memlattice.core.statements.values import value_kind

# Words English marks a new state with, whatever the topic (lower case, as
# written: "ported" and "handed" would stem to "port" and "hand"). Strong ones are
# verbs of replacement; "now" and its like only date the statement.
_REPLACING_VERBS = ("move", "switch", "change", "replace", "migrate", "upgrade", "downgrade",
                    "rename", "reschedule", "postpone", "push", "bump", "raise", "lower",
                    "increase", "decrease", "reduce", "cut", "drop", "quit", "sell", "transfer",
                    "reassign", "become", "relocate", "settle", "join", "stop", "update",
                    "swap", "convert", "shift", "extend", "slip", "delay", "defer",
                    "advance", "retire", "deprecate", "rotate")
STRONG_CHANGE = frozenset({"instead", "longer", "anymore", "ported", "handed", "took", "left",
                           "sold", "became", "gave", "new", "newly"})
_STRONG_STEMS = frozenset(stem(v) for v in _REPLACING_VERBS)
WEAK_CHANGE = frozenset({"now", "nowadays", "since", "finally", "starting", "effective",
                         "today", "currently", "latest", "current"})
# Words of a clause that only considers a value: a plan, a wish, a condition, a
# proposal, the future, a past habit ("used to").
HYPOTHETICAL = frozenset({
    "if", "would", "could", "might", "should", "maybe", "perhaps", "wish", "wanna", "gonna",
    "unless", "whether", "wonder", "someday", "imagine", "probably", "possibly", "may",
    "must", "let's", "lets", "suggest", "suggested", "propose", "proposed", "shall",
    "ought", "considering"})
# Words that put a clause in a plan or a past habit only before "to", "on", "about"
# or "of" ("planning to move", "used to live"); elsewhere they are nouns or other
# verbs ("the planning call", "we used Gradle").
_HYPOTHETICAL_BEFORE = frozenset({"plan", "plans", "planning", "planned", "thinking", "going",
                                  "used", "hope", "hoping", "want", "wants", "wanted",
                                  "need", "needs", "dream", "dreaming", "scheduled"})
_HYPOTHETICAL_NEXT = frozenset({"to", "on", "about", "of", "for"})


def hypothetical(clause: list[str]) -> bool:
    """Whether a clause (lower-case words) only considers a value."""
    return any(w in HYPOTHETICAL or (w in _HYPOTHETICAL_BEFORE and i + 1 < len(clause)
                                     and clause[i + 1] in _HYPOTHETICAL_NEXT)
               for i, w in enumerate(clause))


def is_strong(word: str) -> bool:
    """A verb of replacement or a word that says the old state is gone."""
    return word in STRONG_CHANGE or stem(word) in _STRONG_STEMS
# Words that add one more of something rather than replace it.
ADDITIVE = frozenset({"also", "another", "additionally", "extra", "both", "second", "third"})
# Units of duration and distance: a number before one is an age, a length of time or
# a mileage, not a value of the subject's attribute.
_UNITS = frozenset({"year", "years", "month", "months", "week", "weeks", "day", "days",
                    "hour", "hours", "minute", "minutes", "min", "mins", "second",
                    "seconds", "s", "km", "miles", "mi", "times", "x", "percent", "%",
                    "h", "evenings", "nights", "mornings"})
_WORD = re.compile(r"\+?\d[\d\-().]*(?: \d[\d\-()]{2,})+|[\w$€£+][\w$€£'@+\-./:]*[\w%]"
                   r"|[\w$€£]|[?.!;,]", re.UNICODE)
_CLAUSE_BREAKS = frozenset({".", "!", "?", ";", ",", "so", "because", "but", "and", "while",
                            "although", "though"})
_DIGIT = re.compile(r"\d")
_DETERMINERS = frozenset({"the", "our", "my", "this", "that", "their", "your", "its"})
# Identifiers: a value both memories state names what they are about ("the 3.0
# release"), not what changed.
_IDENTIFIERS = frozenset({"version", "host", "email"})


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

    def kinds(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for kind, value in self.values:
            out.setdefault(kind, set()).add(value)
        return out


def _clauses(raw: list[str]) -> list[list[tuple[str, bool]]]:
    """Clauses of (token, whether it starts a sentence): English capitalises a
    sentence's first word, so only a capital elsewhere marks a name."""
    out: list[list[tuple[str, bool]]] = [[]]
    starts = True
    for tok in raw:
        if tok.lower() in _CLAUSE_BREAKS or tok == ":":
            if tok == "?":
                out[-1] = [("?", False)]  # a question asserts nothing
            out.append([])
            starts = tok in {".", "!", "?", ";", ":"}
        else:
            out[-1].append((tok, starts))
            starts = False
    return [c for c in out if c and c != [("?", False)]]


def profile(text: str, *, speaker: str | None) -> Profile:
    """Read `text` (said by `speaker`, an entity key, if anyone), clause by clause:
    a question or a clause that only considers a value contributes nothing."""
    raw = _WORD.findall(text.replace("’", "'"))
    kept = [c for c in _clauses(raw) if not hypothetical([w.lower() for w, _ in c])]
    low_all = [w.lower() for w in raw]
    first = any(w in {"i", "we", "i'm", "we're", "i've", "we've", "my", "our", "me", "us"}
                for w in low_all)
    values: list[tuple[str, str]] = []
    topic: set[str] = set()
    topic_words: set[str] = set()
    ids: set[str] = set()
    change: list[str] = []
    additive = False
    for clause in kept:
        low = [w.lower() for w, _ in clause]
        for i, (w, (o, initial)) in enumerate(zip(low, clause)):
            nxt = low[i + 1] if i + 1 < len(low) else ""
            if is_strong(w) or w in WEAK_CHANGE:
                change.append(w)
            # "too" adds at a clause's end ("a dog too"), not before a word ("too slow").
            additive = additive or w in ADDITIVE or (w == "too" and i == len(low) - 1)
            if _DIGIT.search(w) and i > 0 and (
                    low[i - 1] in _DETERMINERS or (i == 1 and clause[0][1])):
                # "Build 1412 passed", "the 3.0 release": the subject's number, not a value
                ids.add(w)
                topic.add("#" + w)
                continue
            value = _value(w, o, nxt, first_word=initial, speaker=speaker)
            if value is not None:
                if value[0] in _IDENTIFIERS:
                    topic.add("#" + value[1])  # an identifier both name is a shared subject
                if value[0] != "skip":
                    values.append(value)
            elif (w.isalpha() and len(w) > 2 and not is_stop_word(w)
                  and w not in SENTENCE_OPENERS and not is_strong(w)
                  and w not in WEAK_CHANGE and w not in ADDITIVE):
                topic.add(stem(w))
                topic_words.add(w)
    return Profile(voice=speaker, first_person=first, topic=frozenset(topic),
                   topic_words=frozenset(topic_words), ids=frozenset(ids),
                   values=tuple(values), change=tuple(change), additive=additive,
                   blocked=not kept)


def _value(w: str, o: str, nxt: str, *, first_word: bool,
           speaker: str | None) -> tuple[str, str] | None:
    """A token's (kind, value) if it states one; ("skip", "") for a number that is a
    duration or a year; None for a word."""
    if _DIGIT.search(w):
        if nxt in _UNITS or (len(w) == 4 and w.isdigit() and w.startswith(("19", "20"))):
            return "skip", ""
        kind = value_kind([w] + ([nxt] if nxt in {"am", "pm"} else []), [o])
        return ("number" if kind in {"name", "text"} else kind), w.strip(".,")
    if "@" in w or "://" in w or "." in w.strip("."):
        kind = value_kind([w.strip(".,")], [o])  # an address: email, URL or host name
        if kind in {"email", "host"}:
            return kind, w.strip(".,")
    if w in COUNT_WORDS and w not in {"a", "an", "second", "third", "couple", "pair"} \
            and nxt.isalpha() and nxt not in _UNITS and not is_stop_word(nxt):
        return "count", str(COUNT_WORDS[w])
    if w in CALENDAR_WORDS:
        return "when", w
    if (o[:1].isupper() and not first_word and w not in SENTENCE_OPENERS
            and not w.startswith("i'") and w != "i"
            and (speaker is None or entity_key(o) != speaker)):
        return "name", stem(w)
    return None


def contrast(older: Profile, newer: Profile, *, same_source: bool) -> Verdict | None:
    """An update of `older` by `newer` when all three marks hold (module docstring)."""
    if older.blocked or newer.blocked or not newer.change:
        return None
    old_kinds, new_kinds = older.kinds(), newer.kinds()
    shared = set(older.topic & newer.topic)
    if older.ids and newer.ids and not older.ids & newer.ids:
        return None  # build 1412 and build 1413: two subjects
    strong = any(is_strong(w) for w in newer.change)
    subjects = {older.voice, newer.voice}
    same_speaker = ((older.first_person or newer.first_person) and older.voice is not None
                    and older.voice == newer.voice)
    if not shared and not same_speaker:
        return None
    for kind in ("version", "host", "email", "phone", "money", "time", "when", "weekday",
                 "date", "count", "number", "name"):
        before, after = old_kinds.get(kind), new_kinds.get(kind)
        if kind == "name" and before and after:  # a speaker's name is who, not what
            before, after = before - subjects, after - subjects
        if not before or not after:
            continue
        fresh = after - before
        if not fresh:
            continue  # nothing new
        if kind in {"name", "count"} and newer.additive:
            return None  # "we also adopted a dog": one more, not another
        if kind == "name" and not (shared and (same_speaker or strong)):
            continue  # a new name needs its topic, and its owner talking or a replacement
        confidence = (0.6 + 0.05 * min(len(shared), 4) + (0.1 if same_source else 0.0)
                      + (0.05 if strong else 0.0))
        what = f"{min(before)!r} -> {min(fresh)!r}"
        about = ", ".join(sorted(shared)[:4]) or newer.voice or ""
        return Verdict(
            kind="update", confidence=round(min(confidence, 0.9), 2),
            reason=f"another {kind} for the same subject ({about}): {what};"
                   f" change said by {', '.join(dict.fromkeys(newer.change))}",
            subject=about, attribute=kind,
            matched=tuple(dict.fromkeys([*sorted(shared)[:6], *sorted(before)[:2],
                                         *sorted(fresh)[:2], *newer.change[:3]])))
    return None
