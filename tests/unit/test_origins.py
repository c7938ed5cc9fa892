"""The origin policy behind CORS and the WebSocket check (memlattice.core.origins)."""

from __future__ import annotations

import pytest

from memlattice.core.origins import OriginPolicy, parse_origins


def test_a_configured_list_is_exact() -> None:
    policy = OriginPolicy.of(parse_origins("https://App.example.com:443"), development=True)
    assert policy.allows("https://app.example.com")
    assert not policy.allows("http://app.example.com")
    assert not policy.allows("https://app.example.com.evil.net")
    assert not policy.allows("http://localhost:5173")  # a list replaces the default
    assert not policy.allows("null")


def test_unset_lets_in_loopback_pages_in_development_only() -> None:
    development = OriginPolicy.of(None, development=True)
    for origin in ("http://localhost:5173", "https://127.0.0.1", "http://[::1]:3000"):
        assert development.allows(origin), origin
    for origin in ("http://localhost.evil.net", "http://127.0.0.2:80", "file://", "null"):
        assert not development.allows(origin), origin
    assert not OriginPolicy.of(None, development=False).allows("http://localhost:5173")


def test_star_allows_any_origin_and_empty_allows_none() -> None:
    assert OriginPolicy.of(parse_origins("*"), development=False).allows("https://x.example")
    assert not OriginPolicy.of(parse_origins(" , "), development=True).allows(
        "http://localhost:5173")


@pytest.mark.parametrize("bad", ["app.example.com", "https://app.example.com/path",
                                 "https://user@app.example.com"])
def test_what_is_not_an_origin_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="Invalid origin"):
        parse_origins(bad)
