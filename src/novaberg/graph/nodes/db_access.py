"""db_access node ("db_zugriff"), the CharacterGraph's entry (docs/behaviour/nodes.md#db-access).

Loads who is talking before anything is computed:

- `internal.emotion` / `internal.register` — Nova wakes with the state she fell asleep in
  (`nova_state:{u}:{c}`, written by ei_calc_persist). On a user turn the pause since the
  user's last turn fades her arousal toward calm (and resets the categories after a long
  pause); on an impulse the thought's own arousal (`gedanke_arousal`, read through
  `agents/stimulus.py` only) lifts it. Both rules are the pure `ei.persistence.reload_nova_state`.
- `external.emotion` — on a user event from the event payload the HumanGraph measured
  (current_emotion, current_arousal, emotions_vektor, gespraechs_modus, sprach_stil,
  beziehungs_dynamik, tone, intent, prompt_thema). On any other source Nova talks to
  herself: `external` is a **copy** of `internal`.
- profiles from `charakter_hash`: row (u, c) → `external.character`, row (c, u) →
  `internal.character`; missing rows give empty profiles. Row (c, u) also carries
  `user_weight` (column `nutzer_gewichtung`), which the character's salience needs for
  pflicht (docs/behaviour/nodes.md#salience).
- identities (`charakter_anweisungen`) and directives (`direktiven`), active rows only.
- `system_prompt`: for a character imported from a card, the card's system prompt,
  description, personality, scenario and example dialogue (`persona_from_rows`), read
  like the display name from the pair's row of `characters`: the user's own, else the
  shared one (another user's character of the same id is never read).
- the session turns (`raw_turns`, and `session_turns` without Nova's impulse turns), the
  session summary (`session_summary`) and the character's active goals toward the user
  (`geladene_ziele`), read with the rest: ei_calc, the enricher and the branches that run
  next to it (router, situation) need them.
- for later nodes, so they need no round trip of their own: the stance's row of
  `charakter_hash` (`loaded_wheel`) and the appointments of the proactive window
  (`loaded_appointments`, the window the appointment reading reads unless the router
  asked for another) — a failed read leaves the channel unset: that node reads itself —
  and, with the Redis reads, the router's pending agent question (`loaded_pending`), the
  situation node's stored bubble (`loaded_situation`) and the last `gv:detail`
  (`loaded_detail`), each as stored: its reader decodes it — and the agents' enrich-hook
  reads (`loaded_hooks`: {text, rows by agent}; the enricher shapes the rows, and reads
  itself for an agent whose read is missing or failed).

Everything is read in two concurrent round trips, one pipeline to Redis and one to
PostgreSQL. The profile SQL lives in the constants below, the rule tables' in
`agents.rule_store`, so each query lives in one place. A failed read is logged at ERROR,
named in the node's log row and leaves that part empty — the turn can still be answered
without a profile.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from novaberg.agents import rule_store
from novaberg.agents.base import EnrichQuery
from novaberg.agents.deps import GraphDeps
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import (
    StimulusError,
    stimulus_arousal,
    stimulus_is_own_thought,
    stimulus_text,
)
from novaberg.agents.timeline import repository as timeline_repository
from novaberg.ei.canon import parse_number
from novaberg.ei.persistence import reload_nova_state
from novaberg.graph.appointments import Window, proactive_window
from novaberg.graph.nodes.enricher import without_impulses
from novaberg.graph.nodes.situation import TRIGGER_FIELD
from novaberg.graph.nodes.stance import WHEEL_SQL
from novaberg.graph.personality import (
    Character,
    Emotion,
    InternalPersonality,
    Personality,
    RegisterSpace,
)
from novaberg.graph.state import ConversationState
from novaberg.pair import Pair
from novaberg.store import characters, keys, nova_state
from novaberg.store.batch_read import Query, fetch_batch
from novaberg.store.goals import activation_goals_from_rows, activation_query
from novaberg.store.session import decode_turns
from novaberg.store.tables import DIRECTIVES, IDENTITIES
from novaberg.wire import SOURCE_USER

log = logging.getLogger(__name__)


PAYLOAD_TO_EMOTION: Final = {
    "current_emotion": "emotion",
    "current_arousal": "arousal",
    "emotions_vektor": "emotions_vector",
    "gespraechs_modus": "mode",
    "sprach_stil": "language_style",
    "beziehungs_dynamik": "relationship_dynamic",
    "tone": "tone",
    "intent": "intent",
    "prompt_thema": "prompt_topic",
}
"""Event payload field (wire name) → Emotion attribute."""

PROFILE_COLUMNS: Final = {
    "kern_hash": "core",
    "adaptive_hash": "adaptive",
    "beziehungsprofil": "relationship",
    "intentions_profil": "intentions",
    "emotions_profil": "emotions",
}
"""charakter_hash column → Character attribute."""

LEVEL_APPLIED: Final = "angewandt"
LEVEL_MISSING: Final = "kein_level"
LEVEL_NOT_IMPULSE: Final = "kein_impuls"
"""`gedanke_level`: how the own thought's arousal was applied (docs/behaviour/emotion.md#reload)."""

DEFAULT_CHARACTER_NAME: Final = "Nova"


# --- SQL -----------------------------------------------------------------------------------

USER_WEIGHT_COLUMN: Final = "nutzer_gewichtung"
"""Read with the character's own row (character, user): salience's pflicht."""

PROFILE_SQL: Final = (
    f"SELECT {', '.join(PROFILE_COLUMNS)}, {USER_WEIGHT_COLUMN} FROM charakter_hash"
    " WHERE user_id = %s AND character_id = %s"
)

PERSONA_MAX_CHARS: Final = 2_000
"""The persona is cut to this length: the bundled model has a 2048-token context."""

PERSONA_PARTS: Final = (
    ("system_prompt", ""),
    ("beschreibung", "Beschreibung"),
    ("persoenlichkeit", "Persönlichkeit"),
    ("szenario", "Szenario"),
    ("beispiel_dialog", "Beispieldialog"),
)
"""Card fields in the order the system prompt shows them, with their headings."""

_CARD_MACROS: Final = (
    ("{{char}}", "name"),
    ("<bot>", "name"),
    ("{{user}}", "user"),
    ("<user>", "user"),
)
"""Placeholders of character cards: the character's and the person's name."""


def persona_from_rows(rows: list[dict[str, Any]], user_id: str) -> str:
    """The system prompt of a card character (its card's fields), "" for any other."""
    if not rows:
        return ""
    row = rows[0]
    names = {"name": str(row["name"] or ""), "user": user_id}
    parts = []
    for column, heading in PERSONA_PARTS:
        text = str(row[column] or "").strip()
        if text:
            parts.append(f"{heading}: {text}" if heading else text)
    persona = "\n".join(parts)
    for macro, whose in _CARD_MACROS:
        persona = re.sub(re.escape(macro), names[whose], persona, flags=re.IGNORECASE)
    return persona[:PERSONA_MAX_CHARS].rstrip()


def profile_from_rows(rows: list[dict[str, Any]]) -> Character:
    """The `charakter_hash` row as a Character; empty if missing."""
    if not rows:
        return Character()
    return Character.from_dict({attr: rows[0][column] for column, attr in PROFILE_COLUMNS.items()})


def user_weight_from_rows(rows: list[dict[str, Any]]) -> float | None:
    """`nutzer_gewichtung` of the character's row; None without a row or a weight."""
    if not rows:
        return None
    return parse_number(rows[0].get(USER_WEIGHT_COLUMN))


def identities_from_rows(rows: list[dict[str, Any]]) -> list[str]:
    """Active character instructions of the user, oldest first."""
    return [str(row["anweisung"]) for row in rows if str(row["anweisung"] or "").strip()]


def directives_from_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Active directives of the user as {anweisung, kontext}, oldest first."""
    return [
        {"anweisung": str(row["anweisung"]), "kontext": row["kontext"]}
        for row in rows
        if str(row["anweisung"] or "").strip()
    ]


async def _fetch(
    pool: AsyncConnectionPool, sql: str, params: tuple[Any, ...]
) -> list[dict[str, Any]]:
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(sql, params)
        return list(await cur.fetchall())


def name_from_rows(rows: list[dict[str, Any]], character_id: str) -> str:
    """The display name, else the id title-cased ("Nova" for an empty id)."""
    if rows and str(rows[0]["name"] or "").strip():
        return str(rows[0]["name"]).strip()
    return character_id.strip().title() if character_id.strip() else DEFAULT_CHARACTER_NAME


async def character_name(pool: AsyncConnectionPool, pair: Pair) -> str:
    """The display name of the pair's character (the user's own or the shared row) from
    `characters` ("Nova" for the default)."""
    try:
        sql, params = characters.name_query(pair)
        rows = await _fetch(pool, sql, tuple(params))
    except psycopg.Error as exc:
        log.error("characters: name of %r unreadable: %s", pair.character_id, exc)
        rows = []
    return name_from_rows(rows, pair.character_id)


# --- pure parts ------------------------------------------------------------------------------


def emotion_from_payload(payload: dict[str, Any]) -> tuple[Emotion, list[str]]:
    """external.emotion from the HumanGraph's measurements; also the missing field names."""
    data = {attr: payload.get(field) for field, attr in PAYLOAD_TO_EMOTION.items()}
    missing = [field for field in PAYLOAD_TO_EMOTION if payload.get(field) is None]
    return Emotion.from_dict(data), missing


def mirror(internal: InternalPersonality) -> Personality:
    """external on a non-user event: an independent copy of Nova's profile and emotion."""
    return Personality(character=internal.character.copy(), emotion=internal.emotion.copy())


# --- node ---------------------------------------------------------------------------------------


HOOK_PART: Final = "hook_"
"""Prefix of an enrich hook's part in `_read_tables` (then the agent's name)."""


def hook_queries(
    registry: AgentRegistry | None, deps: GraphDeps, state: ConversationState
) -> tuple[str, dict[str, EnrichQuery]]:
    """(stimulus text, the enrich hooks' reads by agent) for the enricher; an agent without
    a read for this text, or whose query cannot be formed, is left to the enricher."""
    try:
        text = stimulus_text(state)
    except StimulusError:
        return "", {}  # the enricher reports it
    if registry is None or not text.strip():
        return text, {}
    queries: dict[str, EnrichQuery] = {}
    for name, agent in registry.all().items():
        try:
            query = agent.enrich_query(deps, state.get("user_id", ""), text)
        except Exception as exc:  # the enricher runs the hook itself and logs its failure
            log.warning("db_access: enrich query of %s not formed: %s", name, exc)
            continue
        if query is not None:
            queries[name] = query
    return text, queries


async def _read_tables(
    pool: AsyncConnectionPool,
    pair: Pair,
    *,
    with_user_profile: bool,
    window: Window,
    hooks: Mapping[str, EnrichQuery],
) -> tuple[dict[str, Any], list[str]]:
    """Profiles, identities, directives, the display name, the goals, the persona, the
    stance's wheel row, the appointments of the proactive `window` and the enrich `hooks`'
    reads in one round trip.

    Returns (values by part, names of the parts that could not be read).
    """
    parsers: dict[str, tuple[Any, Any]] = {
        "profil_charakter": (profile_from_rows, Character()),
        "identitaeten": (identities_from_rows, []),
        "direktiven": (directives_from_rows, []),
        "name": (
            lambda rows: name_from_rows(rows, pair.character_id),
            name_from_rows([], pair.character_id),
        ),
        "ziele": (activation_goals_from_rows, None),  # None: the enricher reads them itself
        "persona": (lambda rows: persona_from_rows(rows, pair.user_id), ""),
        # None: the node after the router (appointments) or the stance reads it itself
        "rad": (lambda rows: {"row": rows[0] if rows else None}, None),
        "termine": (
            lambda rows: {"von": window.start, "bis": window.end, "rows": rows},
            None,
        ),
    }
    queries: list[Query] = [
        (PROFILE_SQL, (pair.character_id, pair.user_id)),
        (rule_store.active_sql(IDENTITIES), (pair.user_id,)),
        (rule_store.active_sql(DIRECTIVES), (pair.user_id,)),
        characters.name_query(pair),
        activation_query(pair),
        characters.persona_query(pair),  # a card character brings its own persona
        (WHEEL_SQL, (pair.character_id, pair.user_id)),
        (timeline_repository.IN_RANGE_SQL, (pair.user_id, window.start, window.end)),
    ]
    if with_user_profile:
        parsers["profil_nutzer"] = (profile_from_rows, Character())
        queries.append((PROFILE_SQL, (pair.user_id, pair.character_id)))
    for name, query in hooks.items():
        parsers[HOOK_PART + name] = (list, None)  # None: the enricher reads it itself
        queries.append(query)
    values: dict[str, Any] = {}
    failures: list[str] = []
    for (what, (parse, empty)), rows in zip(
        parsers.items(), await fetch_batch(pool, queries), strict=True
    ):
        if isinstance(rows, psycopg.Error):
            log.error("db_access: %s unreadable: %s", what, rows)
            failures.append(what)
            values[what] = empty
        else:
            values[what] = parse(rows)
            if what == "profil_charakter":
                values[USER_WEIGHT_COLUMN] = user_weight_from_rows(rows)
    values.setdefault(USER_WEIGHT_COLUMN, None)
    return values, failures


@dataclass(frozen=True)
class RedisReads:
    """What the run needs from Redis, read in one pipelined round trip."""

    nova_state: dict[str, str]
    turns: list[dict[str, Any]]
    summary: str
    pending: dict[str, Any]
    """{raw}: the router's pending agent question, as stored."""
    situation: dict[str, Any]
    """{stand, vorher}: the situation node's stored bubble and the trigger's, as stored."""
    detail: dict[str, Any]
    """{raw}: the last turn's `gv:detail` (the enricher's landscape cluster), as stored."""


async def _read_redis(deps: GraphDeps, pair: Pair, trigger: str | None) -> RedisReads:
    """Nova's stored state, the session turns and the session summary in one round trip
    (ei_calc and the enricher after this node need the latter two; within a run only the
    current user turn's late fields may still be filled in by Path 1's tail), and with
    them what the router, the situation node and the enricher would each read alone (no
    node before them writes it)."""
    pipe = deps.redis.pipeline(transaction=False)
    pipe.hgetall(keys.nova_state(pair))
    pipe.lrange(keys.session_turns(pair), 0, -1)
    pipe.get(keys.session_summary(pair))
    pipe.get(keys.pending_agent(pair.user_id))
    pipe.get(keys.situation(pair))
    pipe.get(keys.hypothesis_detail(pair))
    if trigger:
        pipe.hget(keys.situation_history(pair), trigger)
    stored, raw_turns, summary, pending, situation, detail, *then = await pipe.execute()
    return RedisReads(
        nova_state.as_strings(stored or {}),
        decode_turns(raw_turns or [], pair),
        str(summary) if summary else "",
        {"raw": pending},
        {"stand": situation, "vorher": then[0] if then else None, "anlass": trigger},
        {"raw": detail},
    )


def loaded_hooks(text: str, names: Iterable[str], tables: Mapping[str, Any]) -> dict[str, Any]:
    """`loaded_hooks`: the stimulus text and the rows of each hook read that succeeded."""
    rows = {name: tables[HOOK_PART + name] for name in names}
    return {
        "text": text,
        "rows": {name: found for name, found in rows.items() if found is not None},
    }


async def db_access(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry | None = None
) -> dict[str, Any]:
    """Fill `external` and `internal` (see the module docstring); with a `registry`, read
    the agents' enrich hooks too."""
    user_id = state.get("user_id", "")
    character_id = state.get("character_id", "")
    pair = Pair(user_id, character_id)
    payload = dict(state.get("event_payload") or {})
    is_user_turn = state.get("event_source") == SOURCE_USER
    impulse = stimulus_is_own_thought(state)
    level = stimulus_arousal(state) if impulse else None

    tz = deps.settings.tz
    window = proactive_window(datetime.fromtimestamp(deps.clock(), tz=tz), tz)
    trigger = (state.get("event_payload") or {}).get(TRIGGER_FIELD) if impulse else None
    text, hooks = hook_queries(registry, deps, state)
    reads, (tables, failures) = await asyncio.gather(
        _read_redis(deps, pair, str(trigger) if trigger else None),
        _read_tables(deps.pool, pair, with_user_profile=is_user_turn, window=window, hooks=hooks),
    )
    reload = reload_nova_state(
        reads.nova_state, deps.clock(), is_user_turn, own_thought_arousal=level
    )
    internal = InternalPersonality(
        character=tables["profil_charakter"],
        emotion=Emotion.from_dict(reload.emotion),
        identities=tables["identitaeten"],
        directives=tables["direktiven"],
        register=RegisterSpace(depth=reload.depth, closeness=reload.closeness),
    )
    missing: list[str] = []
    if is_user_turn:
        emotion, missing = emotion_from_payload(payload)
        external = Personality(character=tables["profil_nutzer"], emotion=emotion)
        if missing:
            log.warning(
                "db_access: payload lacks measured fields %s (turn=%s)",
                missing,
                state.get("turn_id"),
            )
    else:
        external = mirror(internal)

    gedanke_level = LEVEL_NOT_IMPULSE
    if impulse:
        gedanke_level = LEVEL_APPLIED if level is not None else LEVEL_MISSING
    return {
        "external": external,
        "internal": internal,
        "character_name": tables["name"],
        "system_prompt": tables["persona"],
        "raw_turns": reads.turns,
        "session_turns": without_impulses(reads.turns),
        "session_summary": reads.summary,
        "loaded_goals": tables["ziele"],
        "loaded_pending": reads.pending,
        "loaded_situation": reads.situation,
        "loaded_detail": reads.detail,
        **({"loaded_wheel": tables["rad"]} if tables["rad"] is not None else {}),
        **({"loaded_appointments": tables["termine"]} if tables["termine"] is not None else {}),
        **({"loaded_hooks": loaded_hooks(text, hooks, tables)} if hooks else {}),
        "user_weight": tables[USER_WEIGHT_COLUMN],
        "thought_level": gedanke_level,
        "_log": {
            "quelle": state.get("event_source"),
            "pause_s": reload.pause_seconds,
            "zerfall": reload.decay_factor,
            "zurueckgesetzt": reload.reset,
            "thought_level": gedanke_level,
            "fehlende_felder": missing,
            "ausfaelle": failures,
            "identitaeten": len(internal.identities),
            "direktiven": len(internal.directives),
        },
    }
