"""The turn context: everything a CharacterGraph run reads from storage, read once, in one
Redis and one PostgreSQL round trip, before anything is computed
(docs/behaviour/nodes.md#db-access).

`read_turn_context` returns a frozen `TurnContext` with English fields; the German column
and hash names are mapped here (or in the store function it calls) and nowhere else. The
db_access node puts it into the state (`turn_context`) and every later node reads its part
from there: no node goes back to storage for what the context holds. The graphs without
db_access (the HumanGraph, the AgentGraph) call the single reads below (`goals`,
`hypothesis_detail`), the same queries read alone.

It lives with the agents, below the graphs, because it reads the agents' tables too: the
identities and directives (`agents/rule_store.py`), the timeline's proactive window and the
enrich hooks' rows.

A failed PostgreSQL part (after `fetch_batch`'s retry of each query alone) is logged at
ERROR, named in `failures` and left empty — where a reader must tell "not read" from
"nothing there" it can: the wheel by `failures`, the proactive window by `rows` None, a
hook by its absence from `hooks.rows`. The turn can still be answered. A failed Redis read
fails the turn, as any storage failure before the answer does.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import psycopg
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.agents import rule_store
from novaberg.agents.offers import Offer, offer_from_raw
from novaberg.agents.pending import pending_from_raw
from novaberg.agents.timeline import repository as timeline
from novaberg.ei.canon import parse_number
from novaberg.impulses.turn_tasks import KnowledgeQuestion, knowledge_query, knowledge_questions
from novaberg.pair import Pair
from novaberg.store import character_profiles, characters, goals, keys, nova_state
from novaberg.store.batch_read import Query, fetch_batch
from novaberg.store.character_profiles import ProfileLayers, WheelRow
from novaberg.store.characters import CardFields
from novaberg.store.conversation_vector import detail_from_raw, load_detail
from novaberg.store.session import decode_turns
from novaberg.store.tables import DIRECTIVES, IDENTITIES
from novaberg.store.user_persona import UserPersona, persona_from_rows, persona_query

__all__ = [
    "PART_WHEEL",
    "CardFields",
    "Directive",
    "HookReads",
    "KnowledgeQuestion",
    "ProactiveAppointments",
    "ProfileLayers",
    "StoredSituation",
    "TurnContext",
    "UserPersona",
    "WheelRow",
    "goals_of",
    "hypothesis_detail",
    "read_turn_context",
]

log = logging.getLogger(__name__)

DEFAULT_CHARACTER_NAME: Final = "Nova"


@dataclass(frozen=True, slots=True)
class Directive:
    """An active directive of the user: the rule and when it applies."""

    instruction: str
    context: str | None


@dataclass(frozen=True, slots=True)
class ProactiveAppointments:
    """The timeline entries of the proactive window [start, end) (rows as the timeline
    agent's repository returns them; None when the read failed)."""

    start: datetime
    end: datetime
    rows: tuple[dict[str, Any], ...] | None


@dataclass(frozen=True, slots=True)
class StoredSituation:
    """The situation node's stored understanding and, on an impulse, the triggering turn's
    entry of its record — both as stored (JSON text), decoded by the node's form check."""

    current: str | None
    at_trigger: str | None
    trigger: str | None


@dataclass(frozen=True, slots=True)
class HookReads:
    """The agents' enrich-hook reads for `text`: rows by agent (only the reads that
    succeeded; the enricher runs the hook itself for any other agent)."""

    text: str
    rows: Mapping[str, list[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class TurnContext:
    """What a CharacterGraph run reads from storage (see the module docstring)."""

    character_name: str
    """The display name from `characters` (the user's own row, else the shared one)."""
    persona: str
    """A card character's system prompt (its card's fields), "" for any other."""
    character_profile: ProfileLayers | None
    """Row (character, user) of `charakter_hash`: Nova toward the user; None = no row."""
    user_profile: ProfileLayers | None
    """Row (user, character): the user as Nova sees them; read on user turns only."""
    user_weight: float | None
    """`nutzer_gewichtung` of the character's row (salience's pflicht); None = none."""
    identities: tuple[str, ...]
    directives: tuple[Directive, ...]
    nova_state: Mapping[str, str]
    """Nova's persisted state hash as stored (`ei.persistence.reload_nova_state` reads it)."""
    session_turns: tuple[dict[str, Any], ...]
    """Every stored turn, oldest first, as stored (wire fields)."""
    session_summary: str
    goals: tuple[dict[str, Any], ...]
    """The character's active goals toward the user, with embeddings (`ei.goals` reads them)."""
    wheel: WheelRow | None
    """The stance's row (character, user); None = no row (or unread: see `failures`)."""
    appointments: ProactiveAppointments
    """The proactive window's entries (for the appointment reading)."""
    pending_question: dict[str, Any] | None
    """A task agent's open question to the user (`agents/pending.py`), or None."""
    situation: StoredSituation
    hypothesis_detail: dict[str, Any] | None
    """The last turn's `gv:detail` (its landscape cluster), or None."""
    hooks: HookReads | None
    """The enrich hooks' reads; None when none was sent."""
    failures: tuple[str, ...] = field(default=())
    """Names of the PostgreSQL parts that could not be read."""
    open_offer: Offer | None = None
    """The offer Nova's last answer made, still waiting for the person's yes
    (`agents/offers.py`); None = none open."""
    knowledge_questions: tuple[KnowledgeQuestion, ...] = ()
    """The pair's open knowledge questions (gaps, knowledge that came back; best first, at
    most `KNOWLEDGE_QUESTIONS`): the composer offers some, the conversation vector weighs
    them (`impulses/turn_tasks.py`)."""
    user_persona: UserPersona | None = None
    """How the person wants to be known (name, short description); None = unset, and the
    prompts then say "der Nutzer" as without it (store/user_persona.py)."""


PART_WHEEL: Final = "wheel"
PART_KNOWLEDGE: Final = "knowledge"
KNOWLEDGE_QUESTIONS: Final = 8
"""Open knowledge questions read per turn (the vector embeds them together)."""
PART_HOOK: Final = "hook_"
"""Prefix of an enrich hook's part (then the agent's name)."""


def _directives(rows: Sequence[Mapping[str, Any]]) -> tuple[Directive, ...]:
    return tuple(
        Directive(instruction=str(row["anweisung"]), context=row["kontext"])
        for row in rows
        if str(row["anweisung"] or "").strip()
    )


def _identities(rows: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(str(row["anweisung"]) for row in rows if str(row["anweisung"] or "").strip())


def display_name(stored: str, character_id: str) -> str:
    """The stored display name, else the id title-cased ("Nova" for an empty id)."""
    if stored:
        return stored
    return character_id.strip().title() if character_id.strip() else DEFAULT_CHARACTER_NAME


async def goals_of(pool: AsyncConnectionPool, pair: Pair) -> list[dict[str, Any]]:
    """The goals a turn activates against its stimulus, read alone (HumanGraph, AgentGraph)."""
    return await goals.load_activation_goals(pool, pair)


async def hypothesis_detail(redis: aioredis.Redis, pair: Pair) -> dict[str, Any] | None:
    """The last turn's `gv:detail`, read alone (AgentGraph); None without one (or
    unreadable, logged)."""
    return await load_detail(redis, pair)


async def _read_tables(
    pool: AsyncConnectionPool,
    pair: Pair,
    *,
    user_turn: bool,
    window: tuple[datetime, datetime],
    hooks: Mapping[str, Query],
) -> tuple[dict[str, Any], list[str]]:
    """Every PostgreSQL part in one round trip: (values by part, names of failed parts)."""
    start, end = window
    parts: dict[str, tuple[Query, Any, Any]] = {
        # part: (query, parse(rows), value when unreadable)
        "character_profile": (
            character_profiles.layers_query(pair.character_id, pair.user_id),
            character_profiles.layers_from_rows,
            None,
        ),
        "identities": ((rule_store.active_sql(IDENTITIES), (pair.user_id,)), _identities, ()),
        "directives": ((rule_store.active_sql(DIRECTIVES), (pair.user_id,)), _directives, ()),
        "name": (characters.name_query(pair), characters.name_from_rows, ""),
        "goals": (
            goals.activation_query(pair),
            lambda rows: tuple(goals.activation_goals_from_rows(rows)),
            (),
        ),
        "persona": (characters.persona_query(pair), characters.card_from_rows, None),
        "user_persona": (persona_query(pair.user_id), persona_from_rows, None),
        PART_WHEEL: (
            character_profiles.wheel_query(pair),
            character_profiles.wheel_from_rows,
            None,
        ),
        "appointments": (
            (timeline.IN_RANGE_SQL, (pair.user_id, start, end)),
            lambda rows: ProactiveAppointments(start, end, tuple(rows)),
            ProactiveAppointments(start, end, None),
        ),
        PART_KNOWLEDGE: (knowledge_query(pair, KNOWLEDGE_QUESTIONS), list, []),
    }
    if user_turn:
        parts["user_profile"] = (
            character_profiles.layers_query(pair.user_id, pair.character_id),
            character_profiles.layers_from_rows,
            None,
        )
    for name, query in hooks.items():
        parts[PART_HOOK + name] = (query, list, None)
    values: dict[str, Any] = {}
    failures: list[str] = []
    results = await fetch_batch(pool, [query for query, _, _ in parts.values()])
    for (part, (_, parse, unreadable)), rows in zip(parts.items(), results, strict=True):
        if isinstance(rows, psycopg.Error):
            log.error("turn context: %s unreadable: %s", part, rows)
            failures.append(part)
            values[part] = unreadable
        else:
            values[part] = parse(rows)
    return values, failures


async def _read_redis(redis: aioredis.Redis, pair: Pair, trigger: str | None) -> list[Any]:
    """Nova's state, the session and its summary, the pending question, the open offer,
    the stored situation (and the trigger's entry), the last gv:detail and the impulse stack
    in one round trip."""
    pipe = redis.pipeline(transaction=False)
    pipe.hgetall(keys.nova_state(pair))
    pipe.lrange(keys.session_turns(pair), 0, -1)
    pipe.get(keys.session_summary(pair))
    pipe.get(keys.pending_agent(pair.user_id))
    pipe.get(keys.offer(pair))
    pipe.get(keys.situation(pair))
    pipe.get(keys.hypothesis_detail(pair))
    pipe.hgetall(keys.impulse_stack(pair))
    if trigger:
        pipe.hget(keys.situation_history(pair), trigger)
    return list(await pipe.execute())


async def read_turn_context(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    pair: Pair,
    *,
    user_turn: bool,
    window: tuple[datetime, datetime],
    trigger: str | None = None,
    hooks: Mapping[str, Query] | None = None,
    hook_text: str = "",
) -> TurnContext:
    """Read the turn context of `pair` in two concurrent round trips.

    `user_turn` adds the user's profile; `window` is the proactive window [start, end) of
    the timeline; `trigger` the turn an impulse refers to (its situation entry is read);
    `hooks` the enrich hooks' queries for `hook_text`, by agent."""
    hooks = dict(hooks or {})
    stored, (tables, failures) = await asyncio.gather(
        _read_redis(redis, pair, trigger),
        _read_tables(pool, pair, user_turn=user_turn, window=window, hooks=hooks),
    )
    state, raw_turns, summary, pending, offer, situation, detail, stack, *then = stored
    profile: ProfileLayers | None = tables["character_profile"]
    card: CardFields | None = tables["persona"]
    hook_rows = {name: tables[PART_HOOK + name] for name in hooks}
    user_persona: UserPersona | None = tables["user_persona"]
    return TurnContext(
        character_name=display_name(tables["name"], pair.character_id),
        persona=persona(card, person_name(user_persona, pair.user_id)),
        character_profile=profile,
        user_profile=tables.get("user_profile"),
        user_weight=parse_number(profile.user_weight) if profile is not None else None,
        identities=tables["identities"],
        directives=tables["directives"],
        nova_state=nova_state.as_strings(state or {}),
        session_turns=tuple(decode_turns(raw_turns or [], pair)),
        session_summary=str(summary) if summary else "",
        goals=tables["goals"],
        wheel=tables[PART_WHEEL],
        appointments=tables["appointments"],
        pending_question=pending_from_raw(pending, pair.user_id),
        situation=StoredSituation(situation, then[0] if then else None, trigger),
        hypothesis_detail=detail_from_raw(detail, pair),
        hooks=(
            HookReads(
                hook_text, {name: rows for name, rows in hook_rows.items() if rows is not None}
            )
            if hooks
            else None
        ),
        failures=tuple(failures),
        open_offer=offer_from_raw(offer, pair),
        knowledge_questions=knowledge_questions(
            tables[PART_KNOWLEDGE], (stack or {}).values(), KNOWLEDGE_QUESTIONS
        ),
        user_persona=user_persona,
    )


# --- a card character's persona ----------------------------------------------------------------

PERSONA_MAX_CHARS: Final = 2_000
"""The persona is cut to this length: the bundled model has a 2048-token context."""

_CARD_MACROS: Final = (
    ("{{char}}", "name"),
    ("<bot>", "name"),
    ("{{user}}", "user"),
    ("<user>", "user"),
)
"""Placeholders of character cards: the character's and the person's name."""


def person_name(user_persona: UserPersona | None, user_id: str) -> str:
    """What a card's {{user}} becomes: the persona's name, else the user id."""
    if user_persona is not None and user_persona.name:
        return user_persona.name
    return user_id


def persona(card: CardFields | None, user_name: str) -> str:
    """The system prompt of a card character: its card's system prompt, description,
    personality, scenario and example dialogue under their headings, the card's
    placeholders filled in ({{user}} with `user_name`); "" for a character that came from
    no card."""
    if card is None:
        return ""
    parts_in_order = (
        (card.system_prompt, ""),
        (card.description, "Beschreibung"),
        (card.personality, "Persönlichkeit"),
        (card.scenario, "Szenario"),
        (card.example_dialogue, "Beispieldialog"),
    )
    lines = []
    for text, heading in parts_in_order:
        text = text.strip()
        if text:
            lines.append(f"{heading}: {text}" if heading else text)
    text = "\n".join(lines)
    names = {"name": card.name, "user": user_name}
    for macro, whose in _CARD_MACROS:
        text = re.sub(re.escape(macro), names[whose], text, flags=re.IGNORECASE)
    return text[:PERSONA_MAX_CHARS].rstrip()
