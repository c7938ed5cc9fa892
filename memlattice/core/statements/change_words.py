"""Words that say a value changed, ended, or was only considered.

English marks a new state with a small set of words whatever the state is about:
verbs of replacement ("moved", "switched", "took over", "sold"), words that date
a statement ("now", "since"), and words that put a clause in a plan, a wish or a
condition
("should", "maybe", "planning to"). memlattice.core.statements.contrast reads
updates with them. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlattice.core.statements.tokens import stem

# Words English marks a new state with, whatever the topic (lower case, as
# written: "ported" and "handed" would stem to "port" and "hand"). Strong ones are
# verbs of replacement; "now" and its like only date the statement.
_REPLACING_VERBS = ("move", "switch", "change", "replace", "migrate", "upgrade", "downgrade",
                    "rename", "reschedule", "postpone", "bump", "raise", "lower",
                    "increase", "decrease", "reduce", "cut", "drop", "sell", "transfer",
                    "reassign", "become", "relocate", "settle", "join", "stop", "update",
                    "swap", "convert", "shift", "extend", "slip", "delay", "defer",
                    "advance", "retire", "deprecate", "rotate", "split", "remove", "cancel",
                    "ditch", "dump", "decommission")
STRONG_CHANGE = frozenset({"instead", "longer", "anymore", "ported", "left", "sold", "became",
                           "newly", "quit", "quits", "quitting", "leaving",
                           # a correction replaces what was said wrongly
                           "typo", "correction", "corrected", "misspoke"})
# "New" replaces only as someone's ("my new number", "their new office"): alone it
# says a thing is recent ("4 new messages", "the new IPs", "Lorcan (new)"), which
# memories say of everything; read by `new_of_someone`.
_OWNERS = frozenset({"my", "our", "his", "her", "their", "its", "your"})
# Verbs that replace only with their particle: "took over", "handed over", "gave up";
# alone they are among English's commonest verbs ("took the kids to the park").
PARTICLE_CHANGE = {"took": {"over"}, "taken": {"over"}, "handed": {"over", "off", "in"},
                    "gave": {"up", "away", "back"}, "given": {"up", "away", "back"},
                    "traded": {"in"}, "trading": {"in"},
                    # "pushed the launch back", "pushed to May"
                    **{push: {"back", "to", "out", "forward", "off"}
                       for push in ("push", "pushed", "pushes", "pushing")}}
# A person after the verb makes it figurative: "it really pushed me to keep going".
_OBJECT_PRONOUNS = frozenset({"me", "us", "you", "him", "her", "them"})


# Compared by stem, but "quit" apart: "quite" stems to it.
_STRONG_STEMS = frozenset(stem(v) for v in _REPLACING_VERBS)
WEAK_CHANGE = frozenset({"now", "nowadays", "since", "finally", "starting", "effective",
                         "today", "currently", "latest", "current", "officially"})
# Words of a clause that only considers a value: a plan, a wish, a condition, a
# proposal, the future, a past habit ("used to").
HYPOTHETICAL = frozenset({
    "if", "would", "could", "might", "should", "maybe", "perhaps", "wish", "wanna", "gonna",
    "unless", "whether", "wonder", "someday", "imagine", "probably", "possibly", "may",
    "must", "let's", "lets", "suggest", "suggested", "propose", "proposed", "shall",
    "ought", "considering", "proposal", "proposals", "draft", "tbd"})
# Labels of a list of things to do: what follows their colon is planned work
# ("Action items: Ilse — move the recurring invite"), not a state.
_PLAN_LABELS = ("action item", "action items", "next step", "next steps", "todo", "to do",
                "to-do", "follow-ups", "follow ups")
# Words that put a clause in a plan or a past habit only before "to", "on", "about"
# or "of" ("planning to move", "used to live"); elsewhere they are nouns or other
# verbs ("the planning call", "we used Gradle").
_HYPOTHETICAL_BEFORE = frozenset({"plan", "plans", "planning", "planned", "thinking", "going",
                                  "used", "hope", "hoping", "want", "wants", "wanted",
                                  "need", "needs", "dream", "dreaming", "scheduled"})
_HYPOTHETICAL_NEXT = frozenset({"to", "on", "about", "of", "for"})


def starts_now(clause: list[str]) -> bool:
    """"From now on", "going forward", "must now": a rule that starts now, so an
    instruction ("everything should go to ana@ribeiro.pt from now on", "clients must
    now call auth-v2") states the present, and ends what held before."""
    joined = " ".join(clause)
    return (any(words in joined for words in ("from now on", "from here on", "going forward"))
            or any(f"{modal} now" in joined for modal in ("must", "should")))


def plans_follow(clause: list[str]) -> bool:
    """Whether a clause before a colon labels what follows as planned or proposed
    ("Action items:", "Proposal from Pilar:", "RFC-112 (draft):")."""
    joined = " ".join(clause)
    return hypothetical(clause) or any(
        joined == label or joined.endswith(" " + label) for label in _PLAN_LABELS)


def new_of_someone(previous: str) -> bool:
    """Whether "new" after `previous` says someone's value was replaced ("my new
    number") rather than that a thing is recent."""
    return previous in _OWNERS


def hypothetical(clause: list[str]) -> bool:
    """Whether a clause (lower-case words) only considers a value."""
    if starts_now(clause):
        return False
    return any(w in HYPOTHETICAL or (w in _HYPOTHETICAL_BEFORE and i + 1 < len(clause)
                                     and clause[i + 1] in _HYPOTHETICAL_NEXT)
               for i, w in enumerate(clause))


def is_strong(word: str, following: Sequence[str] = ()) -> bool:
    """A verb of replacement or a word that says the old state is gone
    (`following`: the next few words, where a particle verb's particle is)."""
    if " " in word:  # as a profile keeps a particle verb: "handed over"
        word, *following = word.split(" ")
    return (word in STRONG_CHANGE or stem(word) in _STRONG_STEMS
            or bool(PARTICLE_CHANGE.get(word, set()) & set(following[:5]))
            and not (following[:1] and following[0] in _OBJECT_PRONOUNS))
