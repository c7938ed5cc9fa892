"""Update detection's part of the graph: what memories state and how statements link.

    (:Memory)-[:STATES {owner, thing, attribute, value, ...}]->(:Attribute {namespace, key})
    (:Memory newer)-[:UPDATES {id, kind, status, confidence, reason, ...}]->(:Memory older)

`queries` builds the Cypher; `store` runs it (in the write's own transaction for
detection, in one of its own for confirming and rejecting).
"""
