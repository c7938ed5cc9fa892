"""The graph explorer: a static single-page app served at `/explorer/`.

The page is built from `explorer/` (TypeScript, React, cytoscape, bundled by
Vite) into `memlattice/explorer_static/`, which is not committed: `./dev`
builds it when the sources are newer. The app serves whatever is built and
answers 503 with the build command when nothing is. The page talks only to
`/graphql`, like any other client.

The same build makes `graphiql.html`, GraphiQL bundled from npm, which the
GraphQL view serves at `GET /graphql` (`graphiql_page`) in place of
Strawberry's page, which loads its scripts and styles from a CDN and so is a
blank page without internet.

Every response carries a Content-Security-Policy that allows this origin
only, so a bundle that tried to load a script, style or font from a CDN
would fail in the browser (the end-to-end test watches for that).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

STATIC_DIR = Path(__file__).parents[1] / "explorer_static"
PREFIX = "/explorer"

CSP_DIRECTIVES = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)
CONTENT_SECURITY_POLICY = "; ".join(CSP_DIRECTIVES)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)

NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Explorer not built</title></head>
<body>
<h1>The Memlattice explorer is not built</h1>
<p>The page's bundle is missing from <code>{directory}</code>.
<code>./dev up</code> builds it; by hand (Node 20.19+ and npm):</p>
<pre>npm --prefix explorer ci
npm --prefix explorer run build</pre>
<p>The GraphQL API works without it: <a href="/graphql">/graphql</a>.</p>
</body></html>
"""


GRAPHIQL_NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>GraphiQL not built</title></head>
<body>
<h1>GraphiQL is not built</h1>
<p>GraphiQL is bundled with the explorer into <code>{directory}</code>, which is missing.
<code>./dev up</code> builds it; by hand (Node 20.19+ and npm):</p>
<pre>npm --prefix explorer ci
npm --prefix explorer run build</pre>
<p>The API itself works: POST GraphQL to this address.</p>
</body></html>
"""


def graphiql_page(directory: Path = STATIC_DIR) -> Response:
    """GraphiQL's page from the bundle, under the explorer's security headers; a 503
    saying how to build it when it is missing (never a page that reaches a CDN)."""
    page = directory / "graphiql.html"
    headers = {name.decode(): value.decode() for name, value in SECURITY_HEADERS}
    headers["cache-control"] = "no-cache"
    if not page.is_file():
        return HTMLResponse(GRAPHIQL_NOT_BUILT.format(directory=directory), status_code=503,
                            headers=headers)
    return HTMLResponse(page.read_text(encoding="utf-8"), headers=headers)


def is_built(directory: Path = STATIC_DIR) -> bool:
    """Whether a bundle is there to serve (Vite writes index.html last)."""
    return (directory / "index.html").is_file()


class _PageFiles(StaticFiles):
    """Static files with an index fallback: unknown page paths get the app's index.html."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            return await super().get_response(path, scope)
        except HTTPException as exc:
            name = PurePosixPath(path.replace(os.sep, "/")).name
            if exc.status_code != 404 or "." in name or path.startswith("assets"):
                raise
            return FileResponse(Path(str(self.directory)) / "index.html")


class ExplorerApp:
    """ASGI app for `/explorer/*`: the bundle if built, else a 503 saying how to build it.

    The directory is checked per request, so a build made while the service
    runs is picked up without a restart.
    """

    def __init__(self, directory: Path = STATIC_DIR) -> None:
        self.directory = directory
        self._files: _PageFiles | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        immutable = "/assets/" in path

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", [])
                           if h[0].lower() not in {name for name, _ in SECURITY_HEADERS}]
                headers.extend(SECURITY_HEADERS)
                hashed = immutable and message["status"] == 200
                cache = b"public, max-age=31536000, immutable" if hashed else b"no-cache"
                headers.append((b"cache-control", cache))
                message = {**message, "headers": headers}
            await send(message)

        if not is_built(self.directory):
            response: Response = HTMLResponse(NOT_BUILT.format(directory=self.directory),
                                              status_code=503)
            await response(scope, receive, send_with_headers)
            return
        if self._files is None:
            self._files = _PageFiles(directory=self.directory, html=True)
        try:
            await self._files(scope, receive, send_with_headers)
        except HTTPException as exc:  # answered here, so it carries the headers too
            await PlainTextResponse(exc.detail, status_code=exc.status_code,
                                    headers=exc.headers)(scope, receive, send_with_headers)


def explorer_routes(directory: Path = STATIC_DIR) -> list[BaseRoute]:
    """`/explorer` (redirects to `/explorer/`) and the page's files under it."""

    async def to_slash(request: Request) -> Response:
        return RedirectResponse(f"{PREFIX}/")

    return [Route(PREFIX, to_slash), Mount(PREFIX, app=ExplorerApp(directory))]
