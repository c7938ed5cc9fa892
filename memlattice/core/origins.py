"""Which web origins may use the API: the policy behind CORS and the WebSocket check.

Pure logic (memlattice.server.cors applies it). `MEMLATTICE_CORS_ORIGINS` set
(comma-separated origins, or `*`): exactly those; set but empty: no
cross-origin page at all. Unset: pages on the machine itself
(`http(s)://localhost`, `127.0.0.1` or `[::1]`, any port) in development or
keyless mode, so a frontend's dev server works without configuration, and
nothing cross-origin otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

LOOPBACK = re.compile(r"https?://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?")


def parse_origins(value: str | Iterable[str]) -> list[str]:
    """The setting as a list: comma-separated text or a list, each origin checked
    (a scheme and host, an optional port, no path) and normalised as browsers send
    it (lower case, no default port); ValueError otherwise."""
    # Imported here: the settings parse this, and every command reads the settings,
    # while importing strawberry costs a command that never serves a third of a second.
    from strawberry.http.websocket_origin import normalize_allowed_origins

    items = value.split(",") if isinstance(value, str) else list(value)
    origins = [item.strip() for item in items if item.strip()]
    return sorted(normalize_allowed_origins(origins))


@dataclass(frozen=True)
class OriginPolicy:
    """The origins whose pages may use the API; `*` among them allows any."""

    origins: frozenset[str]
    loopback: bool

    @classmethod
    def of(cls, configured: list[str] | None, *, development: bool) -> OriginPolicy:
        """`configured` is the setting (None: unset); `development`: development
        or keyless mode, where pages on the machine itself are let in by default."""
        if configured is not None:
            return cls(frozenset(configured), loopback=False)
        return cls(frozenset(), loopback=development)

    @property
    def any_origin(self) -> bool:
        return "*" in self.origins

    def allows(self, origin: str) -> bool:
        """Whether a page served from `origin` (an `Origin` header's value) may call."""
        if self.any_origin:
            return True
        if self.loopback and LOOPBACK.fullmatch(origin):
            return True
        from strawberry.http.websocket_origin import normalize_origin

        normalized = normalize_origin(origin)
        return normalized is not None and normalized in self.origins
