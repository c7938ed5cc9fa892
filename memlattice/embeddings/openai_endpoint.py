"""Facts about an OpenAI-compatible embedding endpoint that need no connection:
its URL (shown without credentials), whether it is this machine, which models take
`dimensions`, which answers are worth retrying and after how long.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

from memlattice.core.errors import Unavailable

OPENAI_BASE_URL = "https://api.openai.com/v1"
RETRYABLE_STATUS = frozenset({408, 409, 429})


def supports_dimensions_parameter(model: str) -> bool:
    """Whether `model` accepts the `dimensions` request parameter.

    Only OpenAI's `text-embedding-3*` family can shorten its vectors on
    request; sending the parameter to anything else is a 400 at best.
    """
    return model.startswith("text-embedding-3")


def is_local_endpoint(base_url: str | None) -> bool:
    """Whether `base_url` points at this machine (loopback), where servers
    such as Ollama or llama.cpp typically run without an API key."""
    if not base_url:
        return False
    host = urlsplit(base_url).hostname
    if host is None:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def display_url(base_url: str) -> str:
    """`base_url` without user-info or query, safe to put in a message."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


def require_openai() -> None:
    try:
        import openai  # noqa: F401
    except ImportError as exc:
        raise Unavailable(
            "the openai embedding provider needs the 'openai' package: "
            "pip install 'openai==3.52.0', or set MEMLATTICE_EMBEDDING_PROVIDER=local",
            provider="openai",
        ) from exc


def is_retryable(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait, from `retry-after-ms`/`retry-after`."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except ValueError:
            continue  # an HTTP date: rare enough to fall back to our backoff
        if value >= 0:
            return value
    return None
