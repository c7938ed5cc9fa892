"""What a dependency parse alone buys update detection (issue 27): a measurement.

    python -m bench.dependency_updates [--files dev,holdout,unseen,fresh] [--offline]

Issue 27 asks what a dependency parse buys over the rule set of
`memlattice.core.statements`. Stanford publishes CoreNLP and its English models
on Maven Central, so this reads every turn of the knowledge-update scenarios
with it (tokens, tags, lemmas, the enhanced++ dependency parse), takes each
clause's claims apart (who: its subject, "I" and "we" being the speaker; what:
the verb's lemma and the argument's role, `live / obl:in`; the value: the
argument's phrase), and links a memory to the latest earlier one whose claim
has the same subject and attribute but another value, as `linking.py` does
for frames. A second reading (`kind`) compares values of one kind (a name, a
number, a time: `values.value_kind`) whatever the verb, since people rarely
restate a fact with the verb they first used.

Prints, per file, the links made and their precision and recall against the
scenarios' truth (`bench._update_scoring`), and the parse's time per turn;
never a scenario's text, so it may run on the sealed files. Needs Java and
Maven (`mvn`, which resolves CoreNLP 4.5.10 and its models, 474 MB, into
~/.m2 on first use; `--offline` uses only what is there). Not product code:
it decides whether a parser is worth a place on the write path.
"""

from __future__ import annotations

import argparse
import bisect
import json
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench._update_scoring import closure
from memlattice.core.entities import entity_key
from memlattice.core.statements.change_words import hypothetical
from memlattice.core.statements.values import value_kind

SCENARIOS = Path(__file__).parent / "knowledge_updates"
_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>memlattice.bench</groupId><artifactId>corenlp</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>edu.stanford.nlp</groupId><artifactId>stanford-corenlp</artifactId>
      <version>4.5.10</version></dependency>
    <dependency><groupId>edu.stanford.nlp</groupId><artifactId>stanford-corenlp</artifactId>
      <version>4.5.10</version><classifier>models</classifier></dependency>
  </dependencies>
</project>
"""
_SELF = frozenset({"i", "we", "me", "us"})
_SELF_OWNERS = frozenset({"my", "our"})
_ADDITIVE = frozenset({"also", "another", "additionally", "extra", "both", "too"})
_NEGATION = frozenset({"not", "never", "no", "n't"})
_VALUE_PARTS = frozenset({"compound", "flat", "nummod", "compound:prt"})
_ARGUMENTS = ("obj", "iobj", "xcomp")

Claim = tuple[tuple[str, str], tuple[str, str], str]  # (subject, attribute, value)


def classpath(work: Path, *, offline: bool) -> str:
    """CoreNLP's classpath, resolved by Maven from Maven Central (or ~/.m2)."""
    (work / "pom.xml").write_text(_POM)
    out = work / "classpath.txt"
    subprocess.run(["mvn", "-q", *(["-o"] if offline else []), "dependency:build-classpath",
                    f"-Dmdep.outputFile={out}"], cwd=work, check=True)
    return out.read_text().strip()


def parse(lines: list[str], work: Path, cp: str) -> tuple[list[dict[str, Any]], float]:
    """CoreNLP's sentences for `lines` (one turn a line) and the seconds it took."""
    (work / "turns.txt").write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    subprocess.run(["java", "-Xmx3g", "-cp", cp, "edu.stanford.nlp.pipeline.StanfordCoreNLP",
                    "-annotators", "tokenize,ssplit,pos,lemma,depparse",
                    "-ssplit.newlineIsSentenceBreak", "always", "-file", "turns.txt",
                    "-outputFormat", "json", "-outputDirectory", str(work), "-threads", "2"],
                   cwd=work, check=True, capture_output=True)
    took = time.monotonic() - started
    return json.loads((work / "turns.txt.json").read_text())["sentences"], took


def by_line(sentences: list[dict[str, Any]], lines: list[str]) -> dict[int, list[dict[str, Any]]]:
    """Sentences grouped by the line they came from (CoreNLP's offsets count UTF-16 units)."""
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += sum(2 if ord(c) > 0xFFFF else 1 for c in line) + 1
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for sentence in sentences:
        offset = sentence["tokens"][0]["characterOffsetBegin"]
        out[bisect.bisect_right(starts, offset) - 1].append(sentence)
    return out


def claims(sentence: dict[str, Any], speaker: str) -> Iterator[Claim]:
    """A sentence's (subject, attribute, value) claims; none from a question, a plan
    or a sentence that adds one more of something."""
    tokens = sentence["tokens"]
    words = [t["word"].lower() for t in tokens]
    if "?" in words or hypothetical(words) or _ADDITIVE & set(words):
        return
    children: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for d in sentence["enhancedPlusPlusDependencies"]:
        children[d["governor"]].append((d["dep"], d["dependent"]))

    def token(i: int) -> dict[str, Any]:
        return tokens[i - 1]

    def phrase(i: int) -> str:
        parts = [i, *(c for dep, c in children[i] if dep in _VALUE_PARTS)]
        return " ".join(token(j)["word"] for j in sorted(parts))

    def subject(i: int) -> tuple[str, str] | None:
        found = [c for dep, c in children[i] if dep.startswith("nsubj")]
        if not found:  # "Sold the old diesel": a chat drops its "I"
            return ("self", speaker) if i == 1 and token(i)["pos"] in {"VBD", "VBN"} else None
        head = found[0]
        lemma = token(head)["lemma"].lower()
        if lemma in _SELF:
            return "self", speaker
        owners = [c for dep, c in children[head] if dep == "nmod:poss"]
        if owners and token(owners[0])["lemma"].lower() in _SELF_OWNERS:
            return f"self:{lemma}", speaker  # "my number is ..."
        if token(head)["pos"] == "PRP":
            return None  # "she", "it": whose is unknown without coreference
        return "thing", phrase(head).lower()

    for i, tok in enumerate(tokens, 1):
        if any(token(c)["lemma"].lower() in _NEGATION for _, c in children[i]):
            continue
        copula = any(dep == "cop" for dep, _ in children[i])
        who = subject(i) if copula or tok["pos"].startswith("VB") else None
        if who is None:
            continue
        if copula:
            yield who, ("be", ""), phrase(i)
            continue
        particle = [token(c)["lemma"].lower() for dep, c in children[i] if dep == "compound:prt"]
        verb = tok["lemma"].lower() + ("_" + particle[0] if particle else "")
        for dep, c in children[i]:
            if dep in _ARGUMENTS or dep.startswith("obl"):
                yield who, (verb, dep), phrase(c)


def _kind(value: str) -> str:
    return value_kind(value.lower().split(), value.split())


def same_attribute(older: Claim, newer: Claim, reading: str) -> bool:
    """Whether two claims of one subject state the same attribute: the same verb and
    role (`frame`), or, for `kind`, values of one specific kind whatever the verb."""
    if reading == "frame" or _kind(older[2]) == "text":
        return older[1] == newer[1]
    return _kind(older[2]) == _kind(newer[2])


def links(turns: list[tuple[str, str, list[Claim]]], reading: str) -> set[tuple[str, str]]:
    """(newer, older) pairs: each claim against the latest earlier claim of its subject
    and attribute, linked when the values differ (nearest neighbours, as linking.py)."""
    seen: list[tuple[str, str, Claim]] = []
    made: set[tuple[str, str]] = set()
    for memory, speaker, mine in turns:
        for claim in mine:
            for other, other_speaker, earlier in reversed(seen):
                if other == memory or earlier[0] != claim[0]:
                    continue
                if claim[0][0].startswith("self") and other_speaker != speaker:
                    continue
                if not same_attribute(earlier, claim, reading):
                    continue
                a, b = earlier[2].lower(), claim[2].lower()
                if a not in b and b not in a:
                    made.add((memory, other))
                break
        seen.extend((memory, speaker, c) for c in mine)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", default="dev,holdout,unseen,fresh")
    parser.add_argument("--offline", action="store_true", help="only what ~/.m2 holds")
    args = parser.parse_args()
    files = args.files.split(",")
    scenarios = {f: json.loads((SCENARIOS / f"{f}.json").read_text())["scenarios"]
                 for f in files}
    rows: list[tuple[str, str, str, str, datetime]] = []  # file, scenario, id, speaker, at
    lines: list[str] = []
    for f, items in scenarios.items():
        for s in items:
            for session in s["sessions"]:
                start = datetime.fromisoformat(session["at"])
                for n, (memory, speaker, text) in enumerate(session["turns"]):
                    rows.append((f, s["id"], memory, entity_key(speaker),
                                 start + timedelta(minutes=2 * n)))
                    lines.append(" ".join(text.split()))
    with tempfile.TemporaryDirectory(prefix="memlattice-corenlp-") as folder:
        work = Path(folder)
        sentences, took = parse(lines, work, classpath(work, offline=args.offline))
    grouped = by_line(sentences, lines)
    print(f"# parsed {len(lines)} turns in {took:.1f} s ({1000 * took / len(lines):.1f} ms a "
          "turn, JVM start included, 2 threads)")
    print(f"{'file':<10} {'reading':<7} {'links':>5} {'P':>5} {'R':>5}")
    for reading in ("frame", "kind"):
        for f, items in scenarios.items():
            predicted = correct = truth_n = found = 0
            for s in items:
                turns = [(memory, speaker, [c for sent in grouped[i] for c in claims(sent, speaker)])
                         for i, (ff, sid, memory, speaker, _) in enumerate(rows)
                         if ff == f and sid == s["id"]]
                truth = {(u["newer"], u["older"]) for u in s.get("updates", [])}
                made = links(turns, reading)
                predicted += len(made)
                correct += len(made & closure(truth))
                truth_n += len(truth)
                found += len(made & truth)
            precision = f"{correct / predicted:.2f}" if predicted else "n/a"
            print(f"{f:<10} {reading:<7} {predicted:>5} {precision:>5} "
                  f"{found / max(1, truth_n):>5.2f}")


if __name__ == "__main__":
    main()
