"""The explorer's live app (API keys required) and headless Debian Chromium,
shared by the explorer's end-to-end tests (tests.e2e.explorer_support has the helpers)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from playwright.async_api import Browser, async_playwright

from memlattice.core.settings import Settings
from memlattice.server.app import create_app
from memlattice.server.explorer import STATIC_DIR, is_built
from tests._live import serve_in_thread
from tests.e2e.explorer_support import CHROMIUM_ARGS, chromium_executable


@pytest.fixture(scope="module")
def live(settings: Settings) -> Iterator[str]:
    """The real app, API keys required, served on a free port."""
    if not is_built():
        pytest.fail(f"the explorer bundle is missing from {STATIC_DIR}:"
                    " `npm --prefix explorer ci && npm --prefix explorer run build` (./dev does it)")
    app = create_app(settings.model_copy(update={"auth_mode": "keys"}))
    with serve_in_thread(app) as url:
        yield url


@pytest.fixture(scope="session")
async def _chromium() -> AsyncIterator[Browser]:
    """One headless Chromium for the session: launching one costs seconds."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium_executable(),
                                                    args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def browser(_chromium: Browser) -> AsyncIterator[Browser]:
    """The session's Chromium. Every page a test opens lives in a browser context of its
    own (`new_page`, `new_context`), so no cookie, storage or cache passes between
    tests; whatever a test leaves open is closed after it, as closing a browser of its
    own would."""
    yield _chromium
    for context in _chromium.contexts:
        await context.close()
