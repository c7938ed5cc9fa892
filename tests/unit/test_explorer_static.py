"""Serving the explorer bundle: the page, its index fallback, the 503 when unbuilt, the CSP."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from memlattice.core.settings import Settings
from memlattice.server import app as app_module
from memlattice.server.explorer import CONTENT_SECURITY_POLICY, explorer_routes


def client_for(directory: Path) -> httpx.AsyncClient:
    app = Starlette(routes=explorer_routes(directory))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>explorer</title>")
    (tmp_path / "assets" / "index-abc123.js").write_text("console.log('hi')")
    return tmp_path


async def test_serves_the_page_with_a_self_only_policy(bundle: Path) -> None:
    async with client_for(bundle) as http:
        page = await http.get("/explorer/")
        asset = await http.get("/explorer/assets/index-abc123.js")
    assert page.status_code == 200 and "<title>explorer</title>" in page.text
    for response in (page, asset):
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY and "http" not in CONTENT_SECURITY_POLICY
    assert page.headers["cache-control"] == "no-cache"
    assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"


async def test_redirects_to_the_slash_and_falls_back_to_the_index(bundle: Path) -> None:
    async with client_for(bundle) as http:
        bare = await http.get("/explorer")
        deep = await http.get("/explorer/memory/some-id")
        missing_asset = await http.get("/explorer/assets/gone.js")
    assert bare.status_code == 307 and bare.headers["location"] == "/explorer/"
    assert deep.status_code == 200 and "<title>explorer</title>" in deep.text
    assert missing_asset.status_code == 404
    assert missing_asset.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert missing_asset.headers["cache-control"] == "no-cache"


async def test_unbuilt_bundle_answers_503_with_the_build_command(tmp_path: Path) -> None:
    async with client_for(tmp_path / "missing") as http:
        response = await http.get("/explorer/")
    assert response.status_code == 503
    assert "npm --prefix explorer ci" in response.text and "./dev up" in response.text
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


async def test_a_bundle_built_while_serving_is_picked_up(tmp_path: Path) -> None:
    async with client_for(tmp_path) as http:
        assert (await http.get("/explorer/")).status_code == 503
        (tmp_path / "index.html").write_text("<!doctype html><title>late</title>")
        response = await http.get("/explorer/")
    assert response.status_code == 200 and "late" in response.text


@pytest.mark.parametrize(("built", "target"), [(True, "/explorer/"), (False, "/graphql")])
async def test_root_redirects_to_the_explorer_when_built(
    monkeypatch: pytest.MonkeyPatch, built: bool, target: str
) -> None:
    monkeypatch.setattr(app_module, "explorer_is_built", lambda: built)
    app = app_module.create_app(Settings(environment="test"))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://t") as http:
        response = await http.get("/")
    assert response.status_code == 307 and response.headers["location"] == target


def test_graphiql_page_comes_from_the_bundle_under_the_same_policy(bundle: Path) -> None:
    from memlattice.server.explorer import graphiql_page

    (bundle / "graphiql.html").write_text("<!doctype html><title>graphiql</title>")
    page = graphiql_page(bundle)
    assert page.status_code == 200 and b"<title>graphiql</title>" in page.body
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert page.headers["cache-control"] == "no-cache"


def test_unbuilt_graphiql_says_how_to_build_and_reaches_no_cdn(tmp_path: Path) -> None:
    from memlattice.server.explorer import graphiql_page

    page = graphiql_page(tmp_path)
    assert page.status_code == 503 and b"npm --prefix explorer run build" in page.body
    assert b"https://" not in page.body and b"<script" not in page.body
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
