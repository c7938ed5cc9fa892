"""How every MCP tool reaches Memlattice: one caller, one namespace, one error shape.

A tool hands `Runner` the operation the Python client would send; the runner
authenticates the caller's key, runs the operation through the `Gateway` (the
GraphQL resolvers and services, in-process) and turns any refusal into a tool
error whose text starts with the stable code (`FORBIDDEN: ...`).

Two things differ by transport and are decided here, not in each tool:

- the namespace a call uses when it names none: the server's default
  (`MEMLATTICE_MCP_NAMESPACE`), so an agent bound to one namespace never has to
  repeat it;
- what a caller without a key is told to do: a stdio agent cannot send an HTTP
  header, so it is told to set `MEMLATTICE_API_KEY` in the server's environment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from memlattice.core.errors import MemlatticeError as ServerError
from memlattice.core.model import validate_namespace
from memlattice.mcp.gateway import Gateway
from memlattice_client._errors import MemlatticeError as ClientError
from memlattice_client._operations import Call

TokenSource = Callable[[Context], str | None]
NAMESPACE_ENV = "MEMLATTICE_MCP_NAMESPACE"
STDIO_KEY_HINT = ("this server needs an API key: set MEMLATTICE_API_KEY=mlk_... in the MCP"
                  " server's environment (create one with `memlattice keys create`)")
HTTP_KEY_HINT = ("this server needs an API key: send `Authorization: Bearer mlk_...` with"
                 " every request (create one with `memlattice keys create`)")


def default_namespace(value: str | None, source: str = NAMESPACE_ENV) -> str | None:
    """The server's default namespace, checked when the server starts: a mistyped
    MEMLATTICE_MCP_NAMESPACE should stop the server, not fail every later call.
    `source` names where the value came from, for the error."""
    value = (value or "").strip() or None
    if value is not None:
        try:
            validate_namespace(value)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
    return value


@dataclass(frozen=True)
class Runner:
    """Runs operations for the tools of one server (see the module docstring)."""

    gateway: Callable[[], Gateway]  # resolved per call: the runtime starts after the tools
    token_for: TokenSource
    namespace_default: str | None = None
    missing_key_hint: str = HTTP_KEY_HINT

    def namespace(self, given: str | None) -> str:
        """The namespace a call names, else the server's default; a call that has
        neither is refused before anything is read or written."""
        chosen = (given or "").strip() or self.namespace_default
        if chosen is None:
            raise ToolError(f"VALIDATION: no namespace: pass `namespace`, or start the server"
                            f" with {NAMESPACE_ENV} set")
        return chosen

    async def __call__(self, ctx: Context, call: Call[Any], *, absent_ok: bool = False) -> Any:
        """`call`'s result as the caller; with `absent_ok`, None for NOT_FOUND (a memory
        that is gone, or that this key may not see, is left out rather than failing)."""
        (result,) = await self.all(ctx, [call], absent_ok=absent_ok)
        return result

    async def all(self, ctx: Context, calls: Sequence[Call[Any]], *,
                  absent_ok: bool = False) -> list[Any]:
        """Each call's result in order, the caller's key checked once for all of them."""
        gw = self.gateway()
        token = self.token_for(ctx)
        try:
            principal = await gw.authenticate(token)
        except (ClientError, ServerError) as exc:
            raise self._refusal(exc, token) from exc
        results: list[Any] = []
        for call in calls:
            try:
                results.append(await gw.run(call, principal))
            except (ClientError, ServerError) as exc:
                if not (absent_ok and exc.code == "NOT_FOUND"):
                    raise self._refusal(exc, token) from exc
                results.append(None)
        return results

    def _refusal(self, exc: ClientError | ServerError, token: str | None) -> ToolError:
        """The tool error for a refused call: its code first, then what to do."""
        message = exc.message
        if exc.code == "UNAUTHENTICATED" and not token:
            message = self.missing_key_hint
        return ToolError(f"{exc.code}: {message}")
