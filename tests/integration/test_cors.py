"""CORS and the WebSocket `Origin` check against the real app (issue 29, item 1).

A listed origin gets preflights answered (methods, the key and JSON headers)
and may read the bookmark and request id of answers; an origin not listed
gets no CORS header at all and its WebSocket handshake is refused; clients
without `Origin` are not affected. The browser side is tests/e2e/test_cors_browser.py.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from httpx_ws import aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport

from memlattice.core.settings import Settings
from tests.integration._apps import app_with

ALLOWED = "https://app.example.com"
OTHER = "https://evil.example.net"
QUERY = {"query": "{ __typename }"}


def preflight(origin: str, headers: str = "authorization,content-type") -> dict[str, str]:
    return {"origin": origin, "access-control-request-method": "POST",
            "access-control-request-headers": headers}


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {name: value for name, value in response.headers.items()
            if name.lower().startswith("access-control-")}


async def handshake(app: Any, origin: str | None) -> str:
    """"open" when the socket is accepted and acknowledged, else why not."""
    headers = {"origin": origin} if origin else {}
    transport = ASGIWebSocketTransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        try:
            async with aconnect_ws("http://test/graphql", client, headers=headers,
                                   subprotocols=["graphql-transport-ws"]) as ws:
                await ws.send_json({"type": "connection_init", "payload": {}})
                reply = await ws.receive_json(timeout=20)
                return "open" if reply["type"] == "connection_ack" else str(reply)
        except Exception as exc:  # noqa: BLE001 - what the refusal raises is the answer
            return f"refused: {type(exc).__name__}"


async def test_a_listed_origin_is_answered_and_others_get_nothing(settings: Settings) -> None:
    async with app_with(settings, environment="test", cors_origins=[ALLOWED]) as client:
        answer = await client.options("/graphql", headers=preflight(ALLOWED))
        assert answer.status_code == 200, answer.text
        assert answer.headers["access-control-allow-origin"] == ALLOWED
        assert {"GET", "POST"} <= set(
            answer.headers["access-control-allow-methods"].replace(" ", "").split(","))
        allowed_headers = answer.headers["access-control-allow-headers"].lower()
        for header in ("authorization", "content-type", "x-memlattice-bookmark"):
            assert header in allowed_headers
        assert "origin" in answer.headers["vary"].lower()

        query = await client.post("/graphql", json=QUERY, headers={"origin": ALLOWED})
        assert query.json() == {"data": {"__typename": "Query"}}
        assert query.headers["access-control-allow-origin"] == ALLOWED
        exposed = query.headers["access-control-expose-headers"].lower()
        assert "x-memlattice-bookmark" in exposed and "x-request-id" in exposed

        refused = await client.options("/graphql", headers=preflight(OTHER))
        assert refused.status_code == 403
        assert cors_headers(refused) == {}
        assert refused.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        # A simple request still runs (the browser, not the server, withholds the
        # answer), but without a CORS header the page cannot read it.
        simple = await client.post("/graphql", json=QUERY, headers={"origin": OTHER})
        assert cors_headers(simple) == {}
        # A header outside the list fails the preflight of a listed origin.
        odd = await client.options("/graphql", headers=preflight(ALLOWED, "x-something"))
        assert odd.status_code == 400

        app = client._transport.app  # type: ignore[attr-defined]
        assert await handshake(app, ALLOWED) == "open"
        assert (await handshake(app, OTHER)).startswith("refused")
        assert await handshake(app, None) == "open"  # not a browser: no Origin to check
        assert await handshake(app, "http://test") == "open"  # same origin


async def test_development_lets_in_pages_on_this_machine_only(settings: Settings) -> None:
    async with app_with(settings, environment="development", auth_mode="keys") as client:
        for origin in ("http://localhost:5173", "http://127.0.0.1:3000", "http://[::1]:8080",
                       "https://localhost"):
            answer = await client.options("/graphql", headers=preflight(origin))
            assert answer.headers.get("access-control-allow-origin") == origin, origin
        for origin in ("http://localhost.evil.net", "http://192.168.1.5:5173", OTHER):
            answer = await client.options("/graphql", headers=preflight(origin))
            assert cors_headers(answer) == {}, origin
        app = client._transport.app  # type: ignore[attr-defined]
        assert (await handshake(app, "http://localhost.evil.net:5173")).startswith("refused")


async def test_nothing_cross_origin_by_default_outside_development(
        session_app: tuple[Any, Any]) -> None:
    transport = httpx.ASGITransport(app=session_app[1])
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        answer = await client.options("/graphql", headers=preflight("http://localhost:5173"))
        assert answer.status_code == 403 and cors_headers(answer) == {}
    assert (await handshake(session_app[1], "http://localhost:5173")).startswith("refused")


def test_the_setting_reads_comma_separated_origins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLATTICE_CORS_ORIGINS", "https://App.Example.com:443, http://localhost:5173")
    assert Settings().cors_origins == ["http://localhost:5173", "https://app.example.com"]
    monkeypatch.setenv("MEMLATTICE_CORS_ORIGINS", "")
    assert Settings().cors_origins == []
    monkeypatch.setenv("MEMLATTICE_CORS_ORIGINS", "https://app.example.com/graphql")
    with pytest.raises(ValueError, match="cors_origins"):
        Settings()
