"""`ConversationState`: every channel any graph node reads or writes.

LangGraph silently drops a key that is not declared here at the next node border, without a
trace. So every key a node returns must be declared, and a test builds each graph and checks
it (docs/behaviour/graphs.md#state). Channel names are English; where a channel crosses a
boundary its wire name is mapped once there (docs/architecture.md, "Names inside and on the
wire"). Comments say what each holds. Channels several nodes append to carry a reducer.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from novaberg.agents.offers import Offer
from novaberg.agents.turn_context import TurnContext
from novaberg.graph.personality import InternalPersonality, Personality
from novaberg.memory.bridge import PendingWrite

__all__ = ["STATE_CHANNELS", "ConversationState", "PendingWrite", "TribunalVote", "turn_context"]


class TribunalVote(TypedDict):
    """One judge's verdict. `failure` is set (and `vote` is None) when unreadable."""

    role: str  # "jurist" | "psychologe" | "ethiker"
    score: float | None
    directives_score: float | None
    vote: str | None  # "ok" | "warnung" | "ablehnen"
    reasoning: str
    failure: str | None


def _merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    return {**(left or {}), **(right or {})}


class ConversationState(TypedDict, total=False):
    # --- core -----------------------------------------------------------------------------
    turn_context: TurnContext  # what the run read from storage, once (db_access; CharacterGraph)
    user_id: str
    character_id: str
    character_name: str  # display name from `characters`, loaded by db_access
    user_weight: float | None  # row (character, user) in charakter_hash, by db_access
    turn_id: str
    message_ids: list[str]
    user_prompt: str  # what the counterpart said; absent/empty on an impulse
    own_thought: str  # Nova's own thought; empty on a user turn
    system_prompt: str
    received_at: float | None

    # --- event and role flags (docs/behaviour/graphs.md#role-flags) -----------------------
    event_source: str  # "user" | "character"
    event_payload: dict[str, Any]
    trigger_count: int
    perception_role: str  # "user" | "assistant"
    ei_calc_role: str  # "user" | "character"
    graph_role: str  # "human" | "character" | "agent"

    # --- personalities (docs/behaviour/graphs.md#personalities) ---------------------------
    external: Personality  # the counterpart (a copy of internal on non-user events)
    internal: InternalPersonality  # the character

    # --- enricher (docs/behaviour/nodes.md#enricher) --------------------------------------
    raw_turns: list[dict[str, Any]]
    session_turns: list[dict[str, Any]]
    user_intentions: list[str]
    prompt_embedding: list[float] | None
    activated_goals: list[dict[str, Any]]
    goal_vectors: dict[int, list[float]]
    gravitation_term: float
    raw_goal_pull: float
    memory_entries_raw: list[Any]
    search_text: str
    search_text_source: str
    long_term_resonance: dict[str, Any]
    library_notes: list[dict[str, Any]]  # wire aufzeichnungen: the turn's library passages
    web_context: str  # search context: the composer's web search of the stimulus (needs_web)
    gravitation_points: list[dict[str, Any]]  # memories pulling Nova's emotion (enricher)

    # --- reducer -----------------------------------------------------------------
    memory_entries: list[Any]
    memory_context: str  # third person (thinker, tribunal, corrector)
    memory_context_composer: str  # Person A / Person B

    # --- EI (docs/behaviour/nodes.md#ei-calc) ---------------------------------------------
    emotion_history: list[dict[str, Any]]
    nova_emotion_history: list[dict[str, Any]]
    nova_emotion_conflict: bool
    thought_level: str  # how the own-thought arousal was applied ("angewandt", "kein_level")

    # --- situation and memory anchor (docs/behaviour/nodes.md#situation) -------------------
    situation: dict[str, Any]  # wire sachlage: gegenstand, nutzerziel, objekte, angebote, offen
    situation_bridge: dict[str, Any]  # wire sachlage_bruecke: impulse → triggering turn
    object_judgement: list[dict[str, Any]]  # wire objekt_urteil: per acute object, distance
    object_reference: str  # wire objekt_bezug: the object this utterance is about ("" none)
    situation_reading: dict[str, Any]  # Path 1's reading for the situation node (payload)
    object_entities: list[dict[str, Any]]  # wire objekt_entitaeten: acute objects' entities

    # --- router (docs/behaviour/nodes.md#router) ------------------------------------------
    needs_web: bool
    needs_timeline: bool
    momentum: str
    management_action: str  # "agent" | "resume" | ""
    management_target: str
    management_target_type: str
    management_tasks: list[dict[str, str]]  # the router's tasks, in its order: {target, text}
    timeline_query: dict[str, Any]
    router_failure: str | None

    # --- the offer chain (docs/behaviour/agents.md#offers, graph/offer_chain.py) ------------
    offer_reply: str  # router: "zugestimmt" | "abgelehnt" | "ohne_angebot" | "" (none)
    accepted_offer: Offer | None  # router: the offer a bare yes took (planner, dispatch)
    offer_candidate: dict[str, str] | None  # wire angebot_kandidat: composer {dienst, objekt, satz}

    # --- appointments (docs/behaviour/nodes.md#appointment-reading) ------------------------
    appointment_reading: dict[str, Any]  # window, appointments, failed; absent = not read

    # --- planner / agents (docs/behaviour/nodes.md#planner) -------------------------------
    agent_name: str  # the agent agent_dispatch runs next ("" = none)
    agent_task: str  # its part of the utterance ("" = the whole stimulus)
    agent_plan: list[Any]  # the tasks still to run (agents/task_plan.py); absent = not planned
    agent_results: list[Any]
    management_result: str
    pending_writes: Annotated[list[PendingWrite], operator.add]
    task_block: str
    task_context_cut: bool
    timeline_id: int | None

    # --- conversation vector (docs/behaviour/nodes.md#conversation-vector) ----------------
    conversation_hypothesis: str
    hypothesis_detail: dict[str, Any]

    # --- stance (docs/behaviour/nodes.md#stance) --------------------------------------------
    stance: dict[str, Any]  # wire haltung; absent = not computed

    # --- composer (docs/behaviour/nodes.md#composer) --------------------------------------
    response_content: str  # wire `antwort_inhalt`: third-person content for the responder
    objection_verdict: dict[str, Any] | None  # wire `einwandsurteil` (graph/objection.py)

    # --- responder (docs/behaviour/nodes.md#responder) ------------------------------------
    response: str
    model: str
    token_total: int

    # --- thinker -------------------------------------------------------------------------
    thinker_result: str
    self_trigger: bool
    self_trigger_payload: dict[str, Any]

    # --- tribunal and correction loop (docs/behaviour/nodes.md#tribunal) ------------------
    tribunal_votes: list[TribunalVote]
    tribunal_verdict: str  # "ok" | "warnung" | "ablehnen"
    tribunal_summary: str
    tribunal_failures: list[str]
    correction_round: int
    max_corrections: int
    evaluate_decision: str  # "ok" | "fallback" | "correct"
    node_annotations: Annotated[list[str], operator.add]

    # --- perception_assistant (docs/behaviour/nodes.md#perception) -----------------------
    perceived_response: str  # the answer text perception_assistant read (release rule)

    # --- salience (docs/behaviour/nodes.md#salience) --------------------------------------
    human_salience: float | None
    salience_failure: str | None
    human_tail_failure: str | None  # Path 1's salience results did not arrive (enricher)

    # --- uptake (docs/behaviour/nodes.md#uptake) ------------------------------------------
    uptake_offers: list[dict[str, Any]]  # the composer's [OFFENE-FRAGEN] {id, frage, quelle}

    # --- dispatcher (docs/behaviour/nodes.md#dispatcher) ----------------------------------
    session_turn_core: str
    session_turn_written: bool
    session_turn_open: bool  # the user turn is stored; intentionen/kern follow (HumanGraph)
    session_turn_time: float  # its `zeit`: the dispatcher archives the turn as stored

    # --- bookkeeping ---------------------------------------------------------------------
    node_timings: Annotated[dict[str, float], _merge_dicts]


STATE_CHANNELS: frozenset[str] = frozenset(ConversationState.__annotations__)
"""Names of every declared channel (used by the channel-declaration test)."""


def turn_context(state: ConversationState) -> TurnContext:
    """The run's turn context; a node that reads it runs after db_access (CharacterGraph)."""
    context = state.get("turn_context")
    if context is None:
        raise KeyError("turn_context: this node runs after db_access (CharacterGraph only)")
    return context
