"""The optional LLM extractor of consolidation (off unless a model is configured).

For a successful episode that lists no observations, an OpenAI-compatible
chat model is asked for subject-predicate-object observations as JSON; each
one is validated like a caller's observation and invalid ones are dropped.
The answer is stored on the episode once (`extractedJson`), so later runs
reuse it and consolidation stays idempotent whatever the model would say
the second time.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

import pydantic

from memlattice.core.records.config import ConsolidationSettings
from memlattice.core.records.consolidation import Episode
from memlattice.core.records.payloads import Observation
from memlattice.core.records.text import describe
from memlattice.core.settings import FactsLLMSettings

log = logging.getLogger(__name__)

MAX_OBSERVATIONS = 20
PROMPT = (
    "You extract durable facts from an agent's successful episode. Answer with JSON only:"
    ' {"observations": [{"subject": str, "predicate": str, "object": str,'
    ' "confidence": number between 0 and 1}]}. At most 20 observations; none if nothing'
    " durable was learned."
)


def parse_observations(text: str) -> list[Observation]:
    """Valid observations from a model's JSON answer; anything malformed is skipped."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        return []
    items = data.get("observations") if isinstance(data, dict) else None
    found: list[Observation] = []
    for item in items if isinstance(items, list) else []:
        try:
            found.append(Observation.model_validate(item))
        except pydantic.ValidationError:
            continue
    return found[:MAX_OBSERVATIONS]


class Extractor(Protocol):
    """Reads one episode, returns observations; closed when consolidation stops."""

    async def __call__(self, episode: Episode) -> list[Observation]: ...

    async def aclose(self) -> None: ...


class JsonChat:
    """Any OpenAI-compatible chat endpoint, asked for a JSON object at temperature 0.

    The one client of chat models in the service: consolidation's extractor and
    the session fact writer (memlattice.services.session_facts) both ask through it.
    """

    def __init__(self, model: str, base_url: str | None, api_key: str, *,
                 timeout_s: float = 60.0, max_retries: int = 2) -> None:
        import openai

        self.model = model
        self.client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key,
                                         max_retries=max_retries, timeout=timeout_s)

    async def ask(self, system: str, user: str) -> str:
        """The model's answer (the text of its first choice); raises what the client
        raises when the endpoint is down or refuses."""
        response = await self.client.chat.completions.create(
            model=self.model, temperature=0, response_format={"type": "json_object"},
            messages=[{"role": "system", "content": system},
                      {"role": "user", "content": user}],
        )
        if not response.choices:
            return ""
        return response.choices[0].message.content or ""

    async def aclose(self) -> None:
        await self.client.close()


def write_side_chat(settings: FactsLLMSettings) -> JsonChat:
    """The write-side LLM's client (session facts and the update judge each open one)."""
    assert settings.model, "no write-side model is configured"
    key = settings.api_key.get_secret_value() if settings.api_key else "unused"
    return JsonChat(settings.model, settings.base_url, key, timeout_s=settings.timeout_s)


class OpenAIExtractor:
    """Consolidation's extractor on a `JsonChat`."""

    def __init__(self, model: str, base_url: str | None, api_key: str) -> None:
        self.chat = JsonChat(model, base_url, api_key)

    async def __call__(self, episode: Episode) -> list[Observation]:
        return parse_observations(await self.chat.ask(PROMPT, describe(episode.payload)))

    async def aclose(self) -> None:
        await self.chat.aclose()


def openai_extractor(settings: ConsolidationSettings) -> OpenAIExtractor | None:
    """An extractor for the configured model, or None when none is configured."""
    if not settings.llm_model:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "unused"
    return OpenAIExtractor(settings.llm_model, settings.llm_base_url, key)
