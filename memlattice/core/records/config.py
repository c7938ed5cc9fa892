"""Consolidation settings (`MEMLATTICE_CONSOLIDATION_*`), part of `Settings`."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class ConsolidationSettings(BaseSettings):
    """When consolidation runs and what its decay and pruning policy is.

    `interval_hours` 0 turns the schedule off (on-demand runs still work). The
    LLM extractor is off unless `llm_model` is set; it then reads episodes that
    carry no observations through any OpenAI-compatible endpoint.
    """

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_CONSOLIDATION_", extra="ignore")

    interval_hours: float = Field(default=6.0, ge=0.0, le=24 * 30)
    salience_half_life_days: float = Field(default=30.0, gt=0.0)
    prune_below: float = Field(default=0.05, ge=0.0, le=1.0)
    prune_min_age_days: float = Field(default=30.0, ge=0.0)
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
