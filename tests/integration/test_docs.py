"""Every fenced block of README.md and docs/*.md runs as written.

- ```graphql blocks are parsed and validated against the schema, then (unless
  they are subscriptions, which need the WebSocket) executed on the session
  app in a fresh namespace: the namespace the doc uses ("demo") is replaced
  by the test's, and the answer must carry no errors. A block of several
  operations is one document, as pasted into GraphiQL: each is run in turn by
  its name.
- ```sh / ```bash / ```shell blocks run with bash against a keyless server of
  the suite on a free port (`localhost:8000` and `127.0.0.1:8000` point at
  it), and `memlattice` commands in them on the suite's Neo4j; they must exit 0
  and no JSON they print may carry "errors".
- ```python blocks run with this interpreter, `MEMLATTICE_URL` pointing at
  that server, under the same rules.

A block that cannot run in a test (it starts a server, creates API keys,
needs Docker, ...) carries `<!-- not run: reason -->` on the line before its
fence, and is reported as skipped by design. Any other block must run: a new
block that cannot fails here until someone marks it and says why.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from graphql import OperationType, parse, validate

from memlattice.core.settings import Settings
from memlattice.server.app import create_app
from tests._live import serve_in_thread

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "shell"}
RUNNABLE = {"graphql", "python"} | SHELL
DOC_NAMESPACE = "demo"
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(?P<reason>\S.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(?P<lang>[\w+-]*)\s*$")
DEV_SERVER = re.compile(r"(?:https?://)?(?:localhost|127\.0\.0\.1):8000")


def _schema() -> Any:
    try:
        from memlattice.resolvers.schema import schema
    except ImportError:
        from memlattice.resolvers.schema import schema
    return schema._schema


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    not_run: str | None  # the reason, when the block is marked

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").split("\n")
        index = 0
        while index < len(lines):
            fence = FENCE.match(lines[index])
            if fence is None:
                index += 1
                continue
            end = index + 1
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            assert end < len(lines), f"{path.name}:{index + 1}: unclosed fence"
            marker = NOT_RUN.match(lines[index - 1]) if index else None
            found.append(Block(path, index + 1, fence["lang"].lower(),
                               "\n".join(lines[index + 1:end]) + "\n",
                               marker["reason"] if marker else None))
            index = end + 1
    return found


BLOCKS = blocks()


def _of(*langs: str) -> list[Any]:
    return [pytest.param(block, id=block.id) for block in BLOCKS
            if block.lang in langs and block.not_run is None]


def test_every_block_runs_or_says_why() -> None:
    unrunnable = [b.id for b in BLOCKS if b.lang not in RUNNABLE and b.not_run is None]
    assert not unrunnable, ("blocks the test cannot run need `<!-- not run: reason -->` on "
                            f"the line before the fence: {unrunnable}")
    assert len(BLOCKS) > 10  # the extraction found the docs' blocks at all


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id) for b in BLOCKS
                                   if b.not_run is not None])
def test_not_run_by_design(block: Block) -> None:
    pytest.skip(f"not run by design: {block.not_run}")


def _in(text: str, namespace: str) -> str:
    """The block with the doc's namespace replaced by the test's (as a GraphQL or
    JSON string, escaped inside a JSON string, or a Python string)."""
    return (text.replace('\\"' + DOC_NAMESPACE + '\\"', '\\"' + namespace + '\\"')
                .replace('"' + DOC_NAMESPACE + '"', '"' + namespace + '"'))


@pytest.mark.parametrize("block", _of("graphql"))
async def test_graphql_block(block: Block, gql: Any, namespace: str) -> None:
    document = parse(block.text)
    problems = validate(_schema(), document)
    assert not problems, f"{block.id}: {[p.message for p in problems]}"
    operations = [d for d in document.definitions if hasattr(d, "operation")]
    if any(op.operation is OperationType.SUBSCRIPTION for op in operations):
        return  # valid; subscriptions run over the WebSocket (test_subscriptions.py)
    assert "$" not in block.text, f"{block.id}: variables need values; write them inline"
    if len(operations) == 1:
        await gql.ok(_in(block.text, namespace))
        return
    for operation in operations:  # validation made sure that each has a name
        response = await gql.http.post("/graphql", json={
            "query": _in(block.text, namespace), "operationName": operation.name.value})
        body = response.json()
        assert not body.get("errors"), f"{block.id} {operation.name.value}: {body['errors']}"


@pytest.fixture(scope="module")
def dev_server(settings: Settings) -> Iterator[str]:
    """A keyless server like `./dev up`'s, on a port the OS picks."""
    with serve_in_thread(create_app(settings.model_copy(update={"auth_mode": "keyless"}))) as url:
        yield url


def _json_outputs(output: str) -> Iterator[Any]:
    """The JSON values a block printed back to back (curl prints bodies without a
    newline), up to the first text that is not JSON."""
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while position < len(output) and output[position].isspace():
            position += 1
        if position >= len(output) or output[position] not in "{[":
            return
        try:
            value, position = decoder.raw_decode(output, position)
        except json.JSONDecodeError:
            return
        yield value


def _run(block: Block, command: list[str], url: str, namespace: str,
         settings: Settings) -> None:
    text = DEV_SERVER.sub(url, _in(block.text, namespace))
    env = {**os.environ, "MEMLATTICE_URL": url, "NEO4J_URI": settings.neo4j.uri or "",
           "NEO4J_USER": settings.neo4j.user,
           "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value()}
    env.pop("MEMLATTICE_API_KEY", None)
    done = subprocess.run([*command, text], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, f"{block.id} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert '"errors"' not in done.stdout, f"{block.id} answered errors:\n{done.stdout}"
    for value in _json_outputs(done.stdout):
        assert not (isinstance(value, dict) and value.get("errors")), f"{block.id}: {value}"


@pytest.mark.parametrize("block", _of(*SHELL))
def test_shell_block(block: Block, dev_server: str, settings: Settings) -> None:
    assert DEV_SERVER.search(block.text), f"{block.id}: a shell block here talks to ./dev up"
    _run(block, ["bash", "-euo", "pipefail", "-c"], dev_server,
         f"test/docs-{uuid.uuid4().hex[:12]}", settings)


@pytest.mark.parametrize("block", _of("python"))
def test_python_block(block: Block, dev_server: str, settings: Settings) -> None:
    _run(block, [sys.executable, "-c"], dev_server, f"test/docs-{uuid.uuid4().hex[:12]}",
         settings)


LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors of a page's headings."""
    anchors = set()
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_links_between_pages_resolve() -> None:
    broken = []
    for path in DOCS:
        for match in LINK.finditer(path.read_text(encoding="utf-8")):
            target = match["target"]
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            destination = (path.parent / file).resolve() if file else path
            if not destination.exists():
                broken.append(f"{path.name}: {target}")
            elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
                broken.append(f"{path.name}: {target} (no such heading)")
    assert not broken, broken
