"""Every wire value that is not a Redis key, defined once.

Redis keys live in `store/keys.py`, table names in `store/tables.py`. Everything else
that crosses a boundary keeps its German name and is spelled here: event sources and
kinds, stimulus origins, the payload fields read in more than one place, graph and
perception roles and WebSocket message types (`pipeline_log` values: `store/pipeline_log.py`). Code names are
English; the values are what the wire carries, so they must not be translated.

This module imports nothing of the project: every layer may use it.
"""

from __future__ import annotations

from typing import Final, Literal

# --- event sources and kinds (event JSON `source`, `typ`) ---------------------------------

SOURCE_USER: Final = "user"
"""An event started by the counterpart's utterance."""

SOURCE_CHARACTER: Final = "character"
"""An event the character started (impulse, self-trigger, continue)."""

EventSource = Literal["user", "character"]

KIND_MESSAGE: Final = "message"
KIND_CONTINUE: Final = "continue"
KIND_AWAITING_USER: Final = "awaiting_user"

EventKind = Literal["message", "continue", "awaiting_user"]

# --- stimulus origin (payload `reiz_herkunft`) ---------------------------------------------

ORIGIN_USER: Final = "nutzer_turn"
"""A run started by the counterpart (the default when the field is absent)."""

ORIGIN_OWN_THOUGHT: Final = "eigener_impuls"
"""A run started by the character's own impulse."""

ORIGIN_OPENING: Final = "eroeffnung"
"""Not a run: the card greeting the person answered, stored as the conversation's opening
(api/greeting_api.py); in the history and the session like an answer, without a stimulus."""

# --- payload fields read or written in more than one module ---------------------------------

FIELD_ORIGIN: Final = "reiz_herkunft"
FIELD_OWN_THOUGHT: Final = "eigener_gedanke"
FIELD_THOUGHT_AROUSAL: Final = "gedanke_arousal"
FIELD_MESSAGE_IDS: Final = "nachrichten_ids"
FIELD_RECEIVED_AT: Final = "empfangen_am"
FIELD_USER_PROMPT: Final = "user_prompt"
FIELD_TURN_ID: Final = "turn_id"
FIELD_HUMAN_SALIENCE: Final = "salienz_human"
FIELD_USER_INTENTIONS: Final = "user_intentionen"
FIELD_PATH1_FAILURE: Final = "pfad1_ausfall"
FIELD_PATH1_TAIL: Final = "pfad1_nachlauf"
"""Event payload flag: Path 1's salience results follow (key `pfad1_nachlauf:{turn_id}`)."""
FIELD_EMOTION_HISTORY: Final = "emotions_verlauf"
FIELD_SITUATION_READING: Final = "sachlage_lesung"
"""User event payload: Path 1's reading of the situation — `{"lesung": {...}}` (the model's
answer, form-checked) or `{"ausfall": reason}`; the CharacterGraph's situation node writes
it forward instead of making the call itself (docs/behaviour/nodes.md#situation)."""
FIELD_TRIGGER_TURN_ID: Final = "ausloeser_turn_id"
"""Impulse payload and its answer: the turn that gave rise to the impulse (possibly null)."""
FIELD_LAST_RECEIVED: Final = "letztes_empfangen_am"
"""User event payload: when the block's last utterance arrived; the supersede rule
measures the block window from it (events/event_consumer.py)."""
FIELD_INTENT: Final = "absicht"
"""Self-event payload: what the character means to do with her second message
(`INTENT_FOLLOW_UP`); graph/follow_up.py sets it."""
FIELD_COMMITMENT: Final = "commitment"
"""Self-event payload: the promise the character's answer made (`COMMITMENT_RESEARCH`,
`COMMITMENT_DELEGATION`); the continue run's router hands it to the agent of that name."""
FIELD_THINKER_RETRY: Final = "thinker_unsicher_retry"
"""Continue payload flag of the thinker's retry (graph/nodes/thinker.py)."""
FIELD_SUPERSEDED: Final = "verdraengt"
"""User event payload: how many runs in a row were superseded before this one (their ids
are carried in it); absent when none was."""

# --- self-events (a `continue` the character starts after her answer) -----------------------

INTENT_FOLLOW_UP: Final = "nachfragen"
"""`absicht`: ask after the person once more (docs/behaviour/events.md#self-events)."""

COMMITMENT_RESEARCH: Final = "recherche"
"""`commitment`: she promised to look something up; kept by the `recherche` agent."""

COMMITMENT_DELEGATION: Final = "delegation"
"""`commitment`: she promised to take a matter on; kept by the `delegation` agent."""

COMMITMENTS: Final = frozenset({COMMITMENT_RESEARCH, COMMITMENT_DELEGATION})

FIELD_AWAITING: Final = "erwartet_antwort"
"""`character_response`: the answer asks an agent's question and waits for the person's
reply — the event kind `awaiting_user`, as the answer carries it
(docs/behaviour/events.md#awaiting-user): `{"typ": "awaiting_user", "agent", "art"}`, null
when nothing waits."""
FIELD_CHANGES: Final = "aenderungen"
"""`character_response`: what the run's agents stored, one `{"agent", "aktion", "text"}` per
verified write (the page's receipts); an empty list when nothing was stored."""

# --- the kind of an agent's question (`erwartet_antwort.art`) -----------------------------

QUESTION_YES_NO: Final = "ja_nein"
"""A yes/no question: the answer is read with the closed consent rule."""

QUESTION_CHOICE: Final = "auswahl"
"""Which of several candidates (the answer names one)."""

QUESTION_OPEN: Final = "offen"
"""Anything else (e.g. "update the note or create a new one?")."""

QuestionKind = Literal["ja_nein", "auswahl", "offen"]

# --- graph roles (pipeline_log `quelle`, the role flags of a run) ---------------------------

GRAPH_HUMAN: Final = "human"
GRAPH_CHARACTER: Final = "character"
GRAPH_AGENT: Final = "agent"
GRAPH_NAMES: Final = frozenset({GRAPH_HUMAN, GRAPH_CHARACTER, GRAPH_AGENT})

EI_ROLE_USER: Final = "user"
"""ei_calc works on the counterpart's emotion (HumanGraph)."""

EI_ROLE_CHARACTER: Final = "character"
"""ei_calc works on the character's own emotion (CharacterGraph, AgentGraph)."""

PERCEIVE_USER: Final = "user"
"""perception reads the counterpart's words (stored turn role `rolle` "user")."""

PERCEIVE_ASSISTANT: Final = "assistant"
"""perception reads the character's own answer (stored turn role `rolle` "assistant")."""

# --- session turn roles (a stored turn's `rolle`) -------------------------------------------

ROLE_USER: Final = "user"
"""A turn the counterpart said."""

ROLE_ASSISTANT: Final = "assistant"
"""A turn the character said."""

# --- WebSocket message types (server → client `typ`) ----------------------------------------

MSG_STAGE: Final = "character_stage"
MSG_RESPONSE: Final = "character_response"
MSG_FAILED: Final = "turn_gescheitert"
MSG_UTTERANCE: Final = "user_utterance"
MSG_HELLO: Final = "verbindung"
MSG_VARIANTS: Final = "antwort_varianten"
"""The answers kept for the last turn (`texte`, `gewaehlt`: the one shown, null while a new
one is on its way): sent when a regenerate starts and when another one is chosen."""
MSG_TURN_REMOVED: Final = "turn_entfernt"
"""The person took their last message back (`art` `zurueckgezogen` before the answer,
`geloescht` with its answer): every client drops the bubbles of `nachrichten_ids`."""
FIELD_REGENERATED: Final = "neu_erzeugt"
"""On a user `message` event: a regenerate of a turn already answered (never superseded:
nothing new was said)."""

# --- timeline rows (`timeline.event_type`) ----------------------------------------------------

TIMELINE_MEMORY_ANCHOR: Final = "erinnerungs_anker"
"""A timeline row that anchors memories to a day; it is no appointment (nobody is reminded
of it, appointment reads leave it out)."""
