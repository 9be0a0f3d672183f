"""db_access node ("db_zugriff"), the CharacterGraph's entry (docs/behaviour/nodes.md#db-access).

Reads the run's turn context (`agents/turn_context.py`: everything the CharacterGraph's
nodes read from storage, in one Redis and one PostgreSQL round trip) into the state as
`turn_context`, and loads who is talking before anything is computed:

- `internal.emotion` / `internal.register` — Nova wakes with the state she fell asleep in
  (`nova_state:{u}:{c}`, written by ei_calc_persist). On a user turn the pause since the
  user's last turn fades her arousal toward calm (and resets the categories after a long
  pause); on an impulse the thought's own arousal (`gedanke_arousal`, read through
  `agents/stimulus.py` only) lifts it. Both rules are the pure `ei.persistence.reload_nova_state`.
- `external.emotion` — on a user event from the event payload the HumanGraph measured
  (current_emotion, current_arousal, emotions_vektor, gespraechs_modus, sprach_stil,
  beziehungs_dynamik, tone, intent, prompt_thema). On any other source Nova talks to
  herself: `external` is a **copy** of `internal`.
- the profiles: the context's user profile → `external.character`, the character's own
  → `internal.character` (missing rows give empty profiles), and that row's
  `user_weight`, which the character's salience needs for pflicht
  (docs/behaviour/nodes.md#salience); identities and directives (active rows only).
- `system_prompt`: a card character's persona, and the display name (`character_name`).
- the session turns (`raw_turns`, and `session_turns` without Nova's impulse turns) and the
  session summary, which ei_calc, the enricher and the branches next to it read.

The context also carries, for later nodes, the goals, the stance's wheel row, the
proactive window's appointments, the router's pending question, the stored situation, the
last `gv:detail` and — with a `registry` — the agents' enrich-hook reads. A part that could
not be read is named in the node's log row (`ausfaelle`); the turn can still be answered.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Final

from novaberg.agents.base import EnrichQuery
from novaberg.agents.deps import GraphDeps
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import (
    StimulusError,
    stimulus_arousal,
    stimulus_is_own_thought,
    stimulus_text,
)
from novaberg.agents.turn_context import ProfileLayers, TurnContext, read_turn_context
from novaberg.ei.persistence import reload_nova_state
from novaberg.graph.appointments import proactive_bounds
from novaberg.graph.nodes.enricher import without_impulses
from novaberg.graph.nodes.situation import TRIGGER_FIELD
from novaberg.graph.personality import (
    Character,
    Emotion,
    InternalPersonality,
    Personality,
    RegisterSpace,
)
from novaberg.graph.state import ConversationState
from novaberg.pair import Pair
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

LOGGED_PARTS: Final = {
    "character_profile": "profil_charakter",
    "user_profile": "profil_nutzer",
    "identities": "identitaeten",
    "directives": "direktiven",
    "name": "name",
    "goals": "ziele",
    "persona": "persona",
    "user_persona": "nutzer_persona",
    "wheel": "rad",
    "appointments": "termine",
}
"""Turn-context part → its name in the node's `ausfaelle` (pipeline_log wire names; a hook
part keeps its `hook_<agent>` name)."""

LEVEL_APPLIED: Final = "angewandt"
LEVEL_MISSING: Final = "kein_level"
LEVEL_NOT_IMPULSE: Final = "kein_impuls"
"""`gedanke_level`: how the own thought's arousal was applied (docs/behaviour/emotion.md#reload)."""


def character_of(layers: ProfileLayers | None) -> Character:
    """A `charakter_hash` row's layers as a Character; empty without a row."""
    if layers is None:
        return Character()
    return Character.from_dict(
        {
            "core": layers.core,
            "adaptive": layers.adaptive,
            "relationship": layers.relationship,
            "intentions": layers.intentions,
            "emotions": layers.emotions,
        }
    )


def directive_items(context: TurnContext) -> list[dict[str, Any]]:
    """The directives in the personality's form ({anweisung, kontext}, the form
    `InternalPersonality.to_dict` and the prompts' renderings keep)."""
    return [{"anweisung": d.instruction, "kontext": d.context} for d in context.directives]


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


async def db_access(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry | None = None
) -> dict[str, Any]:
    """Read the turn context and fill `external` and `internal` (see the module
    docstring); with a `registry`, the agents' enrich-hook reads go with it."""
    pair = Pair(state.get("user_id", ""), state.get("character_id", ""))
    payload = dict(state.get("event_payload") or {})
    is_user_turn = state.get("event_source") == SOURCE_USER
    impulse = stimulus_is_own_thought(state)
    level = stimulus_arousal(state) if impulse else None

    tz = deps.settings.tz
    window = proactive_bounds(datetime.fromtimestamp(deps.clock(), tz=tz), tz)
    trigger = payload.get(TRIGGER_FIELD) if impulse else None
    text, hooks = hook_queries(registry, deps, state)
    context = await read_turn_context(
        deps.redis,
        deps.pool,
        pair,
        user_turn=is_user_turn,
        window=window,
        trigger=str(trigger) if trigger else None,
        hooks=hooks,
        hook_text=text,
    )
    reload = reload_nova_state(
        context.nova_state, deps.clock(), is_user_turn, own_thought_arousal=level
    )
    internal = InternalPersonality(
        character=character_of(context.character_profile),
        emotion=Emotion.from_dict(reload.emotion),
        identities=list(context.identities),
        directives=directive_items(context),
        register=RegisterSpace(depth=reload.depth, closeness=reload.closeness),
    )
    missing: list[str] = []
    if is_user_turn:
        emotion, missing = emotion_from_payload(payload)
        external = Personality(character=character_of(context.user_profile), emotion=emotion)
        if missing:
            log.warning(
                "db_access: payload lacks measured fields %s (turn=%s)",
                missing,
                state.get("turn_id"),
            )
    else:
        external = mirror(internal)

    thought_level = LEVEL_NOT_IMPULSE
    if impulse:
        thought_level = LEVEL_APPLIED if level is not None else LEVEL_MISSING
    turns = list(context.session_turns)
    return {
        "turn_context": context,
        "external": external,
        "internal": internal,
        "character_name": context.character_name,
        "system_prompt": context.persona,
        "raw_turns": turns,
        "session_turns": without_impulses(turns),
        "user_weight": context.user_weight,
        "thought_level": thought_level,
        "_log": {
            "quelle": state.get("event_source"),
            "pause_s": reload.pause_seconds,
            "zerfall": reload.decay_factor,
            "zurueckgesetzt": reload.reset,
            "thought_level": thought_level,
            "fehlende_felder": missing,
            "ausfaelle": [LOGGED_PARTS.get(part, part) for part in context.failures],
            "identitaeten": len(internal.identities),
            "direktiven": len(internal.directives),
        },
    }
