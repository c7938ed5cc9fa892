"""Knowledge that stays current (issue 27): updated facts, through the public API.

    python -m bench.knowledge_update [--files dev,holdout,unseen,fresh] [--json out.json]
        [--dump hits.json] [--verbose]

Each scenario of bench/knowledge_updates/<file>.json (format in that folder's
README.md) is loaded into its own namespace with `ingestConversation`, one
call per session, with the server's own embedder (no client vectors): a chat
where a person states a fact and later changes it, or an agent's notes where
a service, a meeting or an owner changes, among ordinary turns; a quarter of
the scenarios are negative (two statements that both stay true). Then its
questions are asked through the default `search` (no options but the
namespace, and `filter.asOf` for as-of questions), and the write-side update
links are read with `memoryUpdates`. Prints, per file and per domain group
(person / agent):

- current@1: a present question's top hit is the newest statement;
- stale-above: a statement it replaced ranks above it (present questions);
- past@3: a past question finds the earlier statement in the top 3;
- asof@1: with `filter.asOf`, the top hit is the statement valid then;
- stale-marked: a replaced statement, when returned for a present question,
  carries `outdatedBy` (n/a before SearchHit has it);
- keep@3: in negative scenarios, a statement nothing replaced is in the top 3
  and not marked outdated;
- link precision and recall of the update links (CANDIDATE or CONFIRMED,
  any kind, not disputed by the update judge's model) against the scenarios' truth; the rule is in
  bench/_update_scoring.py. "n/a" when the service has no `memoryUpdates`.

Then the links right/all by reading, attribute, confidence and likeness (the two
memories' cosine in the server's embedder, the content words they share, and
where the older stands among the newer one's `mayReplace` offers); `--json` keeps
each link's row with its placement and likeness, never its text. Then the
present and past questions missed, counted by what stood first
(bench._question_misses). `--dump` writes every question's hits as numbers only,
for bench.reorder_offline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._harness import Bench, GraphQLError, bench_service
from bench._question_misses import Turn, describe
from bench._update_scoring import (
    LinkCounts,
    Outcome,
    Tally,
    closure,
    figure,
    replaced_by,
    scenario_problems,
    score_question,
    turn_times,
)
from memlattice.core.lucene import words as lucene_words
from memlattice.core.messages import MessageInput, turn_id
from memlattice.core.query_words import content_words
from memlattice.core.settings import EmbeddingSettings
from memlattice.core.statements.tokens import stem
from memlattice.embeddings.local import WordLlamaEmbedder
from memlattice.search.currency import asks_past, asks_present

SCENARIOS = Path(__file__).resolve().parent / "knowledge_updates"
# The files written to be looked at; the blind ones (unseen, fresh, sealed*) give counts only.
READABLE = frozenset({"dev", "holdout"})
NOW = datetime.now(UTC)
PARALLEL = 4

INGEST = """mutation($input: ConversationInput!) {
  ingestConversation(input: $input) { created } }"""
SEARCH_MARKED = """query($input: SearchInput!) {
  search(input: $input) { memory { id content } score outdatedBy { id } } }"""
SEARCH_PLAIN = """query($input: SearchInput!) { search(input: $input) { memory { id content } } }"""
OFFERS = """query($namespace: String!, $id: ID!) {
  memory(namespace: $namespace, id: $id) { mayReplace(first: 20) { memory { id } } } }"""
UPDATES = """query($namespace: String!) {
  memoryUpdates(namespace: $namespace, statuses: [CANDIDATE, CONFIRMED]) {
    newer { id } older { id } status kind confidence attribute reason proposedBy
    disputedBy } }"""


@dataclass
class Scenario:
    file: str
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def group(self) -> str:
        return str(self.data["group"])

    @property
    def namespace(self) -> str:
        return f"bench/ku/{self.file}/{self.id}"

    def turns(self) -> list[tuple[str, dict[str, Any]]]:
        """(session id, message input) for every turn, in order, with its time."""
        rows: list[tuple[str, dict[str, Any]]] = []
        times = turn_times(self.data)
        for session in self.data["sessions"]:
            for message_id, speaker, content in session["turns"]:
                rows.append((session["id"], {"id": message_id, "speaker": speaker,
                                             "content": content,
                                             "at": times[message_id].isoformat()}))
        return rows

    def memory_ids(self) -> dict[str, str]:
        """Message id -> memory id (ingestion derives memory ids from message ids)."""
        return {message["id"]: turn_id(self.namespace, session,
                                       MessageInput(id=message["id"], content=message["content"]))
                for session, message in self.turns()}

    def truth(self) -> list[tuple[str, str]]:
        return [(u["newer"], u["older"]) for u in self.data.get("updates", [])]


@dataclass
class Failure:
    scenario: str
    kind: str
    question: str
    expected: list[str]
    top: list[tuple[str, str]]


@dataclass
class Results:
    tallies: dict[str, Tally] = field(default_factory=dict)
    links: dict[str, LinkCounts] = field(default_factory=dict)
    # Right and all links per reading, attribute and confidence band, over all files: counts
    # only, so they may be read for the blind files too (which rules misfire, not where).
    link_kinds: dict[str, list[int]] = field(default_factory=dict)
    # One row per link, with no text (its reading, attribute, confidence, whether right).
    link_rows: list[dict[str, Any]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    # Per question, its ranked hits as numbers only (turn order, score, role, speaker index,
    # their pairwise cosines), for trying a reordering offline on every file (`--dump`).
    ranked_rows: list[dict[str, Any]] = field(default_factory=list)
    # Present questions whose top hit is not the newest statement (past ones: the earlier
    # statement not in the top 3), counted by what stood first and where the wanted one
    # stood (bench._question_misses; no text, so any file).
    question_misses: dict[str, int] = field(default_factory=dict)
    links_available: bool = True
    marks_available: bool = True

    def add(self, slices: list[str], outcome: Outcome) -> None:
        for name in slices:
            self.tallies.setdefault(name, Tally()).outcomes.append(outcome)

    def add_links(self, slices: list[str], predicted: list[tuple[str, str]],
                  truth: list[tuple[str, str]]) -> None:
        for name in slices:
            self.links.setdefault(name, LinkCounts()).add(predicted, truth)


def read_scenarios(names: list[str]) -> list[Scenario]:
    scenarios: list[Scenario] = []
    for name in names:
        body = json.loads((SCENARIOS / f"{name}.json").read_text())
        problems = [p for data in body["scenarios"] for p in scenario_problems(data)]
        if problems:
            raise SystemExit(f"{name}.json: " + "; ".join(problems))
        scenarios.extend(Scenario(name, data) for data in body["scenarios"])
    return scenarios


async def load(bench: Bench, scenario: Scenario) -> None:
    sessions: dict[str, list[dict[str, Any]]] = {}
    for session, message in scenario.turns():
        sessions.setdefault(session, []).append(message)
    for session, messages in sessions.items():
        await bench.gql(INGEST, {"input": {"namespace": scenario.namespace,
                                           "sessionId": session, "messages": messages}})


async def search(bench: Bench, results: Results, namespace: str, query: str,
                 as_of: str | None) -> list[dict[str, Any]]:
    """The default search's hits; without `outdatedBy` on the service, the plain ones."""
    filter_: dict[str, Any] = {"namespace": namespace}
    if as_of is not None:
        filter_["asOf"] = as_of
    variables = {"input": {"filter": filter_, "query": query}}
    if results.marks_available:
        try:
            hits: list[dict[str, Any]] = (await bench.gql(SEARCH_MARKED, variables))["search"]
            return hits
        except GraphQLError as error:
            if "outdatedBy" not in str(error):
                raise
            results.marks_available = False
    plain: list[dict[str, Any]] = (await bench.gql(SEARCH_PLAIN, variables))["search"]
    return plain


def confidence_band(confidence: float) -> str:
    """A link's confidence as one of four bands, for the precision breakdown."""
    for edge in (0.5, 0.7, 0.85):
        if confidence < edge:
            return f"conf<{edge}"
    return "conf>=0.85"


def placement(scenario: Scenario, pair: tuple[str, str]) -> dict[str, Any]:
    """Where a link's two turns stand (no text): same session, same speaker, turns apart."""
    at = {m["id"]: (i, session, m["speaker"])
          for i, (session, m) in enumerate(scenario.turns())}
    newer, older = at.get(pair[0]), at.get(pair[1])
    if newer is None or older is None:
        return {}
    return {"same_session": newer[1] == older[1], "same_speaker": newer[2] == older[2],
            "apart": newer[0] - older[0]}


_EMBEDDER: WordLlamaEmbedder | None = None


async def likeness(scenario: Scenario, pair: tuple[str, str]) -> dict[str, Any]:
    """How alike a link's two turns are, as numbers (no text): the cosine of their
    vectors in the server's own embedder, and the content words (stems) they share.
    Whether either separates the contrast reading's right links from its wrong ones
    is a question the blind files may answer in counts."""
    global _EMBEDDER
    text = {m["id"]: m["content"] for _, m in scenario.turns()}
    if pair[0] not in text or pair[1] not in text:
        return {}
    _EMBEDDER = _EMBEDDER or WordLlamaEmbedder()
    newer, older = await _EMBEDDER.embed([text[pair[0]], text[pair[1]]])
    norm = (sum(x * x for x in newer) * sum(x * x for x in older)) ** 0.5 or 1.0
    words = [{stem(w) for w in content_words(lucene_words(text[i]))} for i in pair]
    return {"cosine": round(sum(a * b for a, b in zip(newer, older)) / norm, 3),
            "shared": len(words[0] & words[1])}


async def cosines(texts: list[str]) -> list[list[float]]:
    """The hits' pairwise cosines in the server's embedder (numbers, no text)."""
    global _EMBEDDER
    if not texts:
        return []
    _EMBEDDER = _EMBEDDER or WordLlamaEmbedder()
    vectors = await _EMBEDDER.embed(texts)
    norms = [sum(x * x for x in v) ** 0.5 or 1.0 for v in vectors]
    return [[round(sum(a * b for a, b in zip(u, v)) / (nu * nv), 3)
             for v, nv in zip(vectors, norms)] for u, nu in zip(vectors, norms)]


async def offer_rank(bench: Bench, namespace: str, newer: str, older: str) -> int | None:
    """Where the older memory stands among the newer one's offers (`Memory.mayReplace`,
    its nearest earlier memories by vector and by words): 1 is first, None not in 20."""
    found = (await bench.gql(OFFERS, {"namespace": namespace, "id": newer}))["memory"]
    offered = [o["memory"]["id"] for o in (found or {}).get("mayReplace", [])]
    return offered.index(older) + 1 if older in offered else None


def likeness_bands(row: dict[str, Any]) -> list[str]:
    """The breakdown's keys for a link's likeness (see `likeness` and `offer_rank`)."""
    if "cosine" not in row:
        return []
    cosine = float(row["cosine"])
    band = next((f"cos<{edge}" for edge in (0.3, 0.5, 0.7) if cosine < edge), "cos>=0.7")
    rank = row.get("offer_rank")
    offered = "offer none" if rank is None else next(
        (f"offer<={edge}" for edge in (1, 3, 10) if rank <= edge), "offer<=20")
    return [f"{row['reading']} {band}", f"{row['reading']} shared {min(row['shared'], 3)}"
            + ("+" if row["shared"] >= 3 else ""), f"{row['reading']} {offered}"]


def reading_of(link: dict[str, Any]) -> str:
    """Which reading made a link: a writer or model that stated it, the contrast
    reading (memlattice.core.statements.contrast: "another <kind> for the same
    subject ..."), or the frame reading."""
    if link.get("proposedBy"):
        return "stated"
    return "contrast" if str(link.get("reason") or "").startswith("another ") else "frame"


async def read_links(bench: Bench, results: Results, scenario: Scenario,
                     message_of: dict[str, str]) -> list[tuple[str, str]] | None:
    """The scenario's update links as message-id pairs (an unknown memory keeps its id);
    each also counted, right or wrong, under its reading, attribute and confidence band."""
    if not results.links_available:
        return None
    try:
        rows = (await bench.gql(UPDATES, {"namespace": scenario.namespace}))["memoryUpdates"]
    except GraphQLError as error:
        if "memoryUpdates" not in str(error) and "UpdateStatus" not in str(error):
            raise
        results.links_available = False
        return None
    # A disputed candidate is one recall ignores (the update judge's model said no).
    rows = [r for r in rows if not r.get("disputedBy")]
    pairs = [(message_of.get(r["newer"]["id"], r["newer"]["id"]),
              message_of.get(r["older"]["id"], r["older"]["id"])) for r in rows]
    accepted = closure(scenario.truth())
    for row, pair in zip(rows, pairs):
        reading = reading_of(row)
        link_row = {
            "file": scenario.file, "reading": reading, "attribute": row.get("attribute"),
            "kind": row.get("kind"), "confidence": row.get("confidence"),
            "right": pair in accepted, **placement(scenario, pair),
            **await likeness(scenario, pair), "offer_rank": await offer_rank(
                bench, scenario.namespace, row["newer"]["id"], row["older"]["id"])}
        results.link_rows.append(link_row)
        for key in (f"attr {row.get('attribute') or '?'}", f"reading {reading}",
                    confidence_band(float(row.get("confidence") or 0.0)),
                    *likeness_bands(link_row)):
            tally = results.link_kinds.setdefault(key, [0, 0])
            tally[0] += pair in accepted
            tally[1] += 1
    return pairs


async def evaluate(bench: Bench, results: Results, scenario: Scenario) -> None:
    memory_of = scenario.memory_ids()
    message_of = {memory: message for message, memory in memory_of.items()}
    truth = scenario.truth()
    slices = [scenario.file, scenario.group, f"{scenario.file}/{scenario.group}", "all"]
    turns = {m["id"]: Turn(i, session, m["speaker"], m["content"])
             for i, (session, m) in enumerate(scenario.turns())}
    for question in scenario.data["questions"]:
        kind = question["kind"]
        expected = question["expect"] if isinstance(question["expect"], list) else [
            question["expect"]]
        stale = set().union(*(replaced_by(truth, e) for e in expected)) - set(expected)
        hits = await search(bench, results, scenario.namespace, question["q"],
                            question.get("asOf") if kind == "asof" else None)
        ranked = [message_of.get(h["memory"]["id"], h["memory"]["id"]) for h in hits]
        outdated = [message_of.get(h["memory"]["id"], "") for h in hits if h.get("outdatedBy")]
        outcome = score_question(kind, ranked, expected, stale, outdated)
        results.add(slices, outcome)
        speakers = sorted({turns[m].speaker if m in turns else "" for m in ranked})
        results.ranked_rows.append({
            "file": scenario.file, "scenario": scenario.id, "kind": kind,
            "present": asks_present(question["q"]), "past": asks_past(question["q"], None, NOW),
            "cosines": await cosines([h["memory"]["content"] for h in hits]),
            "hits": [{"order": turns[m].index if m in turns else None, "score": h.get("score"),
                      "role": "expected" if m in expected else "stale" if m in stale
                      else "other",
                      "speaker": speakers.index(turns[m].speaker if m in turns else ""),
                      "outdated": bool(h.get("outdatedBy"))} for m, h in zip(ranked, hits)]})
        if kind in ("present", "past") and not outcome.hit:
            if kind == "present":
                keys = describe(question["q"], ranked, expected, stale, turns)
            else:
                later = {new for new, _ in closure(truth) if set(expected) & replaced_by(
                    truth, new)}
                keys = describe(question["q"], ranked, expected, later, turns,
                                wanted="earlier", rival="later statement")
            for key in keys:
                results.question_misses[key] = results.question_misses.get(key, 0) + 1
        if not outcome.hit or outcome.stale_above:
            results.failures.append(Failure(
                scenario.id, kind + (" (stale above)" if outcome.stale_above else ""),
                question["q"] + (f" [asOf {question['asOf']}]" if kind == "asof" else ""),
                expected, [(m, h["memory"]["content"]) for m, h in zip(ranked, hits)][:3]))
    predicted = await read_links(bench, results, scenario, message_of)
    if predicted is not None:
        results.add_links(slices, predicted, truth)


def print_failures(results: Results) -> None:
    """Every failed question with its top 3 hits (never on the sealed files)."""
    for failure in sorted(results.failures, key=lambda f: (f.scenario, f.kind)):
        print(f"\n[{failure.scenario}] {failure.kind}: {failure.question}"
              f"\n  expected {', '.join(failure.expected)}")
        for message, content in failure.top:
            print(f"  - {message}: {content[:110]}")


def report(results: Results, files: list[str]) -> dict[str, dict[str, Any]]:
    names = [*files, "person", "agent",
             *(f"{f}/{g}" for f in files for g in ("person", "agent")), "all"]
    header = (f"{'slice':<16} {'current@1':>9} {'stale-ab':>9} {'marked':>7} {'past@3':>7}"
              f" {'asof@1':>7} {'keep@3':>7} {'link P':>7} {'link R':>7} {'links':>6}  questions p/pa/a/k")
    print(header)
    table: dict[str, dict[str, Any]] = {}
    for name in names:
        tally = results.tallies.get(name)
        if tally is None:
            continue
        links = results.links.get(name) if results.links_available else None
        row: dict[str, Any] = {
            "current@1": tally.rate("present"), "stale_above": tally.stale_above(),
            "stale_marked": tally.stale_marked() if results.marks_available else None,
            "past@3": tally.rate("past"), "asof@1": tally.rate("asof"),
            "keep@3": tally.rate("keep"),
            "link_precision": links.precision if links else None,
            "link_recall": links.recall if links else None,
            "links": links.predicted if links else None,
            "questions": {k: tally.count(k) for k in ("present", "past", "asof", "keep")}}
        table[name] = row
        counts = "/".join(str(v) for v in row["questions"].values())
        print(f"{name:<16} {figure(row['current@1']):>9} {figure(row['stale_above']):>9}"
              f" {figure(row['stale_marked']):>7}"
              f" {figure(row['past@3']):>7} {figure(row['asof@1']):>7}"
              f" {figure(row['keep@3']):>7} {figure(row['link_precision']):>7}"
              f" {figure(row['link_recall']):>7}"
              f" {'n/a' if row['links'] is None else row['links']:>6}  {counts}")
    if not results.links_available:
        print("# links: n/a (the service has no memoryUpdates query)")
    if results.link_kinds:
        print("# links right/all by reading, attribute, confidence and likeness: " + ", ".join(
            f"{key} {right}/{total}" for key, (right, total) in sorted(results.link_kinds.items())))
    if results.question_misses:
        print("# present and past questions missed, by what stood first: " + ", ".join(
            f"{key} {count}" for key, count in sorted(results.question_misses.items())))
    if not results.marks_available:
        print("# outdated marks: n/a (SearchHit has no outdatedBy): marked is n/a,"
              " keep@3 counts no mark")
    return table


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="dev,holdout,unseen,fresh",
                        help="scenario files of bench/knowledge_updates, comma-separated")
    parser.add_argument("--json", type=Path, help="write the figures and failures as JSON")
    parser.add_argument("--dump", type=Path,
                        help="write every question's ranked hits as numbers (turn order,"
                             " score, role), no text, to try a reordering offline")
    parser.add_argument("--verbose", action="store_true",
                        help="print every failed question with its top 3 hits"
                             " (dev and holdout only: the blind files stay unread)")
    args = parser.parse_args()
    files = [name.strip() for name in args.files.split(",") if name.strip()]
    if args.verbose and not set(files) <= READABLE:
        raise SystemExit("--verbose prints scenario text: only with " + ", ".join(sorted(READABLE)))
    scenarios = read_scenarios(files)
    results = Results()
    # The first writes load the embedder and warm a cold Neo4j; on a busy machine they can
    # outlast the default 30 s request limit, which measures nothing here.
    os.environ.setdefault("MEMLATTICE_LIMIT_REQUEST_TIMEOUT_S", "600")
    for chatty in ("httpx", "memlattice.access"):  # a line per request drowns the figures
        logging.getLogger(chatty).setLevel(logging.WARNING)
    async with bench_service(dimension=256, heap="1g", pagecache="512m",
                             embedding=EmbeddingSettings(provider="local")) as bench:
        started = time.monotonic()
        gate = asyncio.Semaphore(PARALLEL)

        async def loaded(scenario: Scenario) -> None:
            async with gate:
                await load(bench, scenario)

        await asyncio.gather(*(loaded(s) for s in scenarios))
        turns = sum(len(s.turns()) for s in scenarios)
        print(f"# loaded {turns} turns of {len(scenarios)} scenarios"
              f" ({', '.join(files)}) in {time.monotonic() - started:.1f}s")
        started = time.monotonic()

        async def evaluated(scenario: Scenario) -> None:
            async with gate:
                await evaluate(bench, results, scenario)

        await asyncio.gather(*(evaluated(s) for s in scenarios))
        print(f"# asked {len(results.tallies.get('all', Tally()).outcomes)} questions"
              f" in {time.monotonic() - started:.1f}s")
    table = report(results, files)
    if args.verbose:
        print_failures(results)
    if args.dump is not None:
        args.dump.write_text(json.dumps(results.ranked_rows))
    if args.json is not None:
        # The failures quote scenario text: only the files written to be read keep them.
        readable = set(files) <= READABLE
        args.json.write_text(json.dumps({"figures": table, "failures": [
            f.__dict__ for f in results.failures] if readable else None,
            "links": results.link_rows, "question_misses": results.question_misses},
            indent=1, default=list))


if __name__ == "__main__":
    asyncio.run(main())
