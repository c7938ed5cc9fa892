"""The `x-memlattice-bookmark` header: a request's causal bookmarks, opaque to clients.

Why a header: on a Neo4j cluster each service process keeps its own causal
chain, so a client whose write went through replica A and whose next read
goes through replica B would not wait for that write unless it carries the
proof of it across. The response to every request names the Neo4j bookmarks
its transactions ended on; a later request that sends them back (to any
replica) runs only once the cluster member serving it has applied them.

The value is one or more tokens separated by commas; each token is the
unpadded URL-safe base64 of a JSON array of the driver's raw bookmark strings.
Several tokens let a client that ran requests concurrently send the answers of
all of them (the server waits for the union); the service itself answers one
token. Clients must treat tokens as opaque: the encoding is this module's.

Pure code: no I/O. A value that is not a list of tokens of this shape, or is
larger than the limits below, is refused with `BadBookmark` before anything
runs. Whether Neo4j accepts the strings inside is Neo4j's to say (see
`graph.client.translated_errors`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Collection

from memlattice.core.errors import BadBookmark

HEADER = "x-memlattice-bookmark"
# A Neo4j 5 bookmark is ~45 characters (a token of one, ~70), and a chain holds
# one per transaction that ran concurrently; the Python client keeps at most 64
# tokens. These bounds leave room for that and keep a hostile header from
# costing more than a glance (and inside uvicorn's 16 KiB of headers).
MAX_HEADER_CHARS = 12288
MAX_BOOKMARKS = 128
MAX_BOOKMARK_CHARS = 512
_TOKEN = re.compile(r"^[A-Za-z0-9_-]+={0,2}$")
# Printable ASCII without spaces: every bookmark format Neo4j has used fits.
_BOOKMARK = re.compile(r"^[\x21-\x7e]+$")


def encode(bookmarks: Collection[str]) -> str:
    """One token for `bookmarks` (empty string for none: send no header then)."""
    if not bookmarks:
        return ""
    raw = json.dumps(sorted(bookmarks), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _token_bookmarks(token: str) -> list[str]:
    if not _TOKEN.match(token):
        raise BadBookmark(f"`{HEADER}` holds a token that is not URL-safe base64;"
                          " send back the value a response carried, unchanged")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        values = json.loads(raw.decode())
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise BadBookmark(f"`{HEADER}` holds a token this service did not issue;"
                          " send back the value a response carried, unchanged") from None
    if not isinstance(values, list) or not values or not all(
            isinstance(v, str) and 0 < len(v) <= MAX_BOOKMARK_CHARS and _BOOKMARK.match(v)
            for v in values):
        raise BadBookmark(f"`{HEADER}` holds a token this service did not issue;"
                          " send back the value a response carried, unchanged")
    return values


def decode(values: Collection[str]) -> frozenset[str]:
    """The bookmarks in the header's values (a request may repeat the header).

    Empty values and empty list elements are ignored (an HTTP list may have
    them); anything else that is not a token of `encode` is refused."""
    if sum(len(v) for v in values) > MAX_HEADER_CHARS:
        raise BadBookmark(f"`{HEADER}` is longer than {MAX_HEADER_CHARS} characters",
                          limit=MAX_HEADER_CHARS)
    bookmarks: set[str] = set()
    for value in values:
        for token in value.split(","):
            token = token.strip()
            if token:
                bookmarks.update(_token_bookmarks(token))
    if len(bookmarks) > MAX_BOOKMARKS:
        raise BadBookmark(f"`{HEADER}` names more than {MAX_BOOKMARKS} bookmarks;"
                          " send the latest response's value", limit=MAX_BOOKMARKS)
    return frozenset(bookmarks)
