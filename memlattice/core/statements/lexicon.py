"""The English a statement of fact is read with: relation frames and cue words.

Every list here is about English grammar or about which relations a person or a
system has one value of at a time, never about particular sentences; each says
why it holds for any agent's memory (a chat, notes, tool results).

Words are compared as Porter stems (memlattice.core.statements.extract.stem), so
"lives", "lived" and "living" are one verb.
"""

from __future__ import annotations

# Relation frames: (verb stem, preposition or None) -> the attribute it states. Each
# names a relation a subject holds ONE value of at a time (a person lives in one
# place, works for one employer, is married to one person; a service listens on one
# port), which is what makes a different value an update rather than one more fact.
# Verbs of events that recur (visit, meet, see, go) are deliberately absent: "I
# visited Rome" and "I visited Paris" are both true.
FRAMES: dict[tuple[str, str | None], str] = {
    # where someone lives
    ("live", "in"): "residence", ("live", "at"): "residence", ("live", "on"): "residence",
    ("move", "to"): "residence", ("move", "into"): "residence", ("move", "in"): "residence",
    ("reloc", "to"): "residence", ("settl", "in"): "residence", ("settl", "into"): "residence",
    ("resid", "in"): "residence", ("base", "in"): "residence", ("base", "out"): "residence",
    # who someone works for, and as what
    ("work", "at"): "employer", ("work", "for"): "employer", ("join", None): "employer",
    ("hire", "by"): "employer", ("employ", "by"): "employer", ("start", "at"): "employer",
    ("work", "as"): "role", ("promot", "to"): "role",
    # whom someone is with
    ("marri", "to"): "partner", ("marri", None): "partner", ("engag", "to"): "partner",
    ("date", None): "partner",
    # which school someone attends
    ("studi", "at"): "school", ("enrol", "at"): "school", ("attend", None): "school",
    # where a thing runs or answers (hosts, ports, addresses of services)
    ("listen", "on"): "endpoint", ("run", "on"): "endpoint", ("serv", "on"): "endpoint",
    ("bind", "to"): "endpoint", ("point", "to"): "endpoint", ("deploy", "to"): "endpoint",
    ("host", "on"): "endpoint", ("host", "at"): "endpoint", ("reachabl", "at"): "endpoint",
    # who owns or looks after a thing
    ("own", "by"): "owner", ("maintain", "by"): "owner", ("handl", "by"): "owner",
    ("lead", "by"): "owner",
    # when a recurring or planned thing happens
    ("happen", "on"): "schedule", ("happen", "at"): "schedule", ("meet", "on"): "schedule",
    ("meet", "at"): "schedule", ("due", "on"): "deadline", ("due", None): "deadline",
}

# Which subjects a frame is about: a person's relations need a person (the speaker,
# or a name); a service's need a thing (a name, or a noun phrase). "I run on
# Tuesdays" is not an endpoint.
PERSON_FRAMES = frozenset({"residence", "employer", "role", "partner", "school", "vehicle",
                           "tool"})
THING_FRAMES = frozenset({"endpoint", "owner", "schedule", "deadline", "tool"})

# Verbs whose relation is the subject's only value of it with no preposition: the
# object is the value ("I drive a Civic", "we use Gradle").
OBJECT_FRAMES: dict[str, str] = {
    "drive": "vehicle", "use": "tool", "run": "tool",
}

# Verbs of having: their object is a kind of thing and how many of it. A different
# count of the same kind is an update ("two rabbits" -> "three rabbits"); another
# kind is one more fact ("a cat", then "a dog").
HAVE_VERBS = frozenset({"have", "has", "had", "own", "keep", "kept", "got", "get", "adopt",
                        "bought", "buy"})

# Verbs that say a value changed; with "to" their object is the new value, whatever
# the relation ("the standup moved to Thursday", "upgraded to 16").
CHANGE_VERBS = frozenset({"move", "switch", "chang", "shift", "bump", "upgrad", "downgrad",
                          "migrat", "updat", "reschedul", "push", "postpon", "renam",
                          "reassign", "transfer", "hand", "pass", "went", "becam", "becom",
                          "turn", "convert"})

# The copula and its forms: "X is Y" states Y as X's value.
COPULA = frozenset({"is", "are", "was", "were", "be", "am", "'s", "becomes", "became"})

# Words that mark a statement as a change from an earlier state: English marks a
# new state with them whatever it is about.
CHANGE_CUES = frozenset({"now", "anymore", "longer", "new", "moved", "switched", "changed",
                         "since", "finally", "just", "recently", "nowadays", "currently",
                         "updated", "upgraded", "instead", "officially", "lately"})

# Clauses that do not assert a present fact: questions are handled apart; these
# words put a clause in the hypothetical, the future, a wish or a plan, and a
# wrong link must never come from a clause that only considers a value.
IRREALIS = frozenset({"if", "would", "could", "might", "should", "maybe", "perhaps", "wish",
                      "hope", "hoping", "plan", "planning", "planned", "thinking", "think",
                      "considering", "consider", "want", "wants", "wanted", "wanna", "gonna",
                      "will", "unless", "whether", "wonder", "dream", "dreaming", "someday",
                      "imagine", "probably", "possibly", "may", "tomorrow", "soon", "next",
                      "used", "ago", "once", "when", "until", "before", "tried", "try",
                      "trying", "thought", "guess", "suppose", "supposed", "need", "needs",
                      "must", "going", "let", "lets", "can", "can't", "cannot", "told",
                      "said", "says", "ask", "asked"})

# Words at a clause's start that carry no content of it (interjections, discourse
# markers): skipped before the subject is read.
DISCOURSE = frozenset({"so", "well", "oh", "ok", "okay", "also", "and", "but", "anyway",
                       "btw", "fyi", "update", "note", "yeah", "yes", "hey", "hi", "now",
                       "just", "still", "then", "plus", "actually", "finally", "guess",
                       "what", "news", "big", "quick", "heads", "up", "good", "great",
                       "wow", "haha", "lol", "ah", "um", "uh", "hmm", "honestly", "today",
                       "recently", "lately", "currently", "nowadays", "officially"})

# Words between a subject and its verb that do not change what is stated.
AUXILIARIES = frozenset({"have", "has", "had", "just", "finally", "now", "recently", "also",
                         "officially", "already", "actually", "currently", "still", "been",
                         "do", "does", "did", "really", "both", "all", "mostly", "basically",
                         "nowadays", "lately", "permanently", "fully"})

# How a value of "X is ..." opens when it is an opinion, not a fact: an intensifier
# or an evaluative adjective ("so bold", "really thought-provoking", "awesome").
# Two people's opinions of one thing both stand, and so do one person's over time.
EVALUATIVE = frozenset({
    "so", "really", "very", "super", "pretty", "quite", "too", "totally", "absolutely",
    "truly", "such", "incredibly", "extremely", "kinda", "awesome", "amazing", "great",
    "good", "nice", "cool", "beautiful", "lovely", "wonderful", "fun", "fantastic",
    "incredible", "inspiring", "important", "special", "perfect", "interesting", "exciting",
    "boring", "hard", "tough", "easy", "difficult", "crazy", "insane", "wild", "sweet",
    "cute", "bad", "terrible", "awful", "brilliant", "excellent", "stunning", "gorgeous",
    "powerful", "emotional", "meaningful", "fascinating", "impressive", "adorable",
    "rewarding", "challenging", "exhausting", "stressful", "hilarious", "best", "worst"})

NEGATIONS = frozenset({"not", "no", "never", "longer", "anymore"})

# Pronouns that name the speaker (or the writer of a note).
FIRST_PERSON = frozenset({"i", "we"})
FIRST_POSSESSIVE = frozenset({"my", "our"})
# Pronouns a rule cannot resolve without a model: a clause led by one is skipped.
UNRESOLVED = frozenset({"he", "she", "they", "it", "this", "that", "these", "those", "you",
                        "there", "here", "who", "which", "someone", "everyone", "nobody",
                        "his", "her", "their", "its", "your", "one"})
# Pronouns, as a label's words ("Mine: +34 612 ...", "Yours: ..."): whose they are is
# the conversation's, not the words', so such a label names no attribute.
PRONOUNS = UNRESOLVED | FIRST_PERSON | FIRST_POSSESSIVE | {
    "me", "us", "him", "them", "mine", "yours", "hers", "ours", "theirs"}
DETERMINERS = frozenset({"the", "a", "an", "our", "my", "this", "that", "its", "their",
                         "his", "her", "your", "new", "old", "current", "latest", "own",
                         "some", "same", "brand", "cute", "little", "big", "lovely", "nice",
                         "beautiful", "small", "tiny", "huge", "great"})

# Where a value ends: a subordinate clause or an adjunct of time or reason follows.
VALUE_STOPS = frozenset({",", "because", "since", "after", "when", "and", "but", "so",
                         "which", "who", "where", "as", "though", "although", "while",
                         "for", "with", "from", "last", "this", "these", "next", "every",
                         "each", "until", "till", "now", "anymore", "then", "again",
                         "instead", "too", "already", "yesterday", "today", "tonight",
                         "recently", "lately", "finally", "ago", "starting", "effective",
                         "thanks", "lol", "haha", "actually", "right", "btw", "permanently",
                         "at", "by", "in", "on", "during", "to", "if", "or"})

PREPOSITIONS = frozenset({"in", "to", "into", "at", "for", "as", "on", "by", "out", "from",
                          "near", "with", "onto", "over"})

COUNT_WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "second": 2, "third": 3, "fourth": 4, "fifth": 5, "couple": 2, "pair": 2,
}

# Words that tie a clause to one occasion rather than to what holds: "the session cache
# was slow yesterday", "the standup is at 11 today". A clause about an occasion states
# no standing value unless it says that something changed ("moved to 9100 today").
OCCASIONS = frozenset({"today", "yesterday", "tonight"})
# The second word of a two-word occasion: "this morning", "last night".
OCCASION_PARTS = frozenset({"morning", "afternoon", "evening", "night"})
# Words before an occasion that make it the start of a state: "as of today", "from tonight".
STATE_STARTS = frozenset({"of", "from", "since", "starting", "effective", "beginning"})
# What "this" or "last" makes a time of, after a word of STATE_STARTS at the head of a
# clause ("As of last week", "Since this morning"); with an occasion ("From today"),
# "now" ("From now on"), calendar words and numbers ("Since April", "Starting 3
# March"), such an adjunct is skipped to find the clause's subject, with or without
# the comma that informal writing leaves out.
TIME_UNITS = OCCASION_PARTS | {"week", "month", "year", "weekend"}
# Units of a length of time: "two weeks ago", "three months now" say when or how long,
# and end the value before them ("joined Accenture two weeks ago").
DURATION_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year",
                            "decade"})
