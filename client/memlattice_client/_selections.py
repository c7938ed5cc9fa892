"""What each operation asks the server for: the GraphQL selections, brief and full.

Every selected field is priced: the server charges an operation's estimated
cost (docs/api.md#limits) to the API key's cost budget, which for a key limited
to 5 requests a second is 500 units a second. A call that selected every field
of a page of memories cost several seconds of that budget, and left the key's
next calls refused until it was paid. So the calls that return many memories
(`search`, `memories`, `memory_history`, `summarize`, `memory_updates`) or many
records (`records`, `recall_facts`, `facts_by_evidence`) select by default what
their callers read, and `detail="full"` every field; a field left out reads as its
model's default (None, an empty tuple, `memory_type` "note"), so whatever says
whether a memory or record still holds (its status, what superseded it, its
validity and expiry, its revision status) is always selected.
Single memories and records (`memory`, `record`, writes, revisions) are cheap and
always come whole.
"""

from __future__ import annotations

from typing import Literal

Detail = Literal["brief", "full"]

MEMORY = """
  id namespace key content memoryType value summary tags metadata scope agentId userId
  sessionId taskId status confidence sensitivity salience source sourceType extractionMethod provenance
  createdAt updatedAt expiresAt version accessCount lastAccessedAt embeddingModel
  embeddingDimension supersededBy supersededAt forgottenAt eventStart eventEnd
  reinforcements lastReinforcedAt duplicateOf nearDuplicates { kind memoryId reason score }
  written
"""
# A memory's main fields, what a listing's caller reads: what it says (content, key,
# value, tags, metadata, type), whose it is (scope and its ids), whether it still
# holds (status, what superseded it, confidence, sensitivity) and when. 21 units.
MEMORY_BRIEF = """
  id namespace key content memoryType value tags metadata scope agentId userId sessionId
  taskId status confidence sensitivity supersededBy createdAt updatedAt version
"""
# A memory another one names (a conflict, the newer or older side of an update):
# the fields `Memory` requires, and its status: a field left out reads as its
# model's default, and a superseded memory must not read as ACTIVE.
MEMORY_REF = "id namespace content status createdAt updatedAt version"
EDGE = "id type sourceId targetId createdAt metadata"
NAMESPACE_CONFIG = """namespace version backend scoring
  weights { similarity fulltext recency popularity } decayHalfLifeDays rrfK embeddingModel
  embeddingDimension autoSupersede updatedAt updatedBy"""
HIT = f"""
  score similarityScore ftsScore recencyScore popularityScore graphScore boost rerankScore
  similarityRank ftsRank expanded path {{ type sourceId targetId }}
  memory {{ {MEMORY} }} conflicts {{ {MEMORY} }} outdatedBy {{ {MEMORY} }}
  update {{ id status kind confidence reason subject attribute matched createdAt proposedBy }}
"""
# What a search's caller typically reads of a hit: the memory, its score parts, and
# whatever changes what it means (conflicts, a newer memory and how firm that is).
# Ten whole `HIT`s cost 1,611, three times the cost budget of a key limited to 5
# requests a second; ten of these cost 471 (the integrations' fields included).
HIT_BRIEF = f"""
  score similarityScore ftsScore expanded
  memory {{ id namespace key content memoryType value tags metadata scope agentId userId
    sessionId taskId status createdAt updatedAt version }}
  conflicts {{ {MEMORY_REF} }} outdatedBy {{ {MEMORY_REF} }}
  update {{ id status kind confidence reason subject attribute proposedBy }}
"""

# A typed record, every field (`_record_models.Record`): 73 units. Its tool calls,
# plan nodes and edges and evidence come with it (the server prices them once).
RECORD = f"""
  memory {{ {MEMORY} }} recordType payload kind recordedAt validFrom validTo revisionStatus
  retractedAt toolCalls {{ id tool args result at dependsOn }}
  planNodes {{ id kind label tool args }} planEdges {{ source target kind }}
  evidence {{ kind ref }}
"""
# A record's memory, brief: MEMORY_BRIEF without `value` (records have none) and
# with `expiresAt` (a fact's `valid_until`: until when it holds).
RECORD_MEMORY = """
  id namespace key content memoryType tags metadata scope agentId userId sessionId taskId
  status confidence sensitivity supersededBy expiresAt createdAt updatedAt version
"""
# What a listing's caller reads of a record: all of it but its memory's secondary
# fields (summary, salience, provenance, access counts, ...). Its tool calls, plan
# nodes and edges stay: left out, an episode's would read as none. 49 units.
_RECORD_OWN = """recordType payload kind recordedAt validFrom validTo revisionStatus
  retractedAt evidence { kind ref }"""
RECORD_BRIEF = f"""
  memory {{ {RECORD_MEMORY} }} {_RECORD_OWN}
  toolCalls {{ id tool args result at dependsOn }}
  planNodes {{ id kind label tool args }} planEdges {{ source target kind }}
"""
# A fact (what `recall_facts` finds): a fact has no tool calls, plan nodes or edges,
# so those read as empty, truly. 32 units.
FACT_BRIEF = f"memory {{ {RECORD_MEMORY} }} {_RECORD_OWN}"


def chosen(detail: Detail, brief: str, full: str) -> str:
    """The selection `detail` names; anything else is a caller's typo, refused here
    rather than silently read as "brief"."""
    if detail == "brief":
        return brief
    if detail == "full":
        return full
    raise ValueError(f'detail must be "brief" or "full", not {detail!r}')
