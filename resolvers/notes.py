"""`extensions.notes`: what an operation tells its caller beside the data.

A search that ran on one signal only (no query vector and no embedder) says
so here, rather than silently returning weaker results; an operation that used
a deprecated spelling (docs/api.md, "One vocabulary") names the current one.
"""

from __future__ import annotations

from typing import Any

from strawberry.extensions import SchemaExtension


class ResultNotes(SchemaExtension):
    def get_results(self) -> dict[str, Any]:
        notes = getattr(self.execution_context.context, "notes", None)
        return {"notes": list(dict.fromkeys(notes))} if notes else {}
