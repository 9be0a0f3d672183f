"""Every Redis key the system uses, defined once.

The key *strings* are wire protocol and keep their German names verbatim
(`turn_laeuft`, `nova_state`, ...); the builder functions have English names.
Nothing else in the code base formats a Redis key by hand.
"""

from __future__ import annotations

from novaberg.pair import Pair

# --- TTLs that belong to the key itself (seconds) -------------------------------

SESSION_TTL = 14_400
"""Session turns and summary live 4 h after the last write (docs/behaviour/memory.md#session)."""

QUEUE_TTL = 3_600
"""prompt_queue / event_queue expire an hour after the last push
(docs/behaviour/events.md#queues)."""

TURN_MARKER_TTL = 600
"""Emergency brake for a turn nobody ends (docs/behaviour/events.md#turn-marker)."""

SITUATION_TTL = 14_400
"""The running understanding of a conversation (Sachlage) and its per-turn record live 4 h
after the last write, like the session (docs/behaviour/nodes.md#situation)."""

PENDING_AGENT_TTL = 300
"""A task agent's open question expires after 5 minutes
(docs/behaviour/agents.md#open-questions)."""

OFFER_TTL = PENDING_AGENT_TTL
"""An offer of Nova's waits for its yes as long as an agent's question waits for its answer:
both are a yes/no question to the person, and a "ja" minutes later still means the same thing,
while one much later may be said to something else (docs/behaviour/agents.md#offers)."""


# --- hash tags (docs/behaviour/events.md#hash-tags) ---------------------------
#
# In a Redis Cluster a multi-key script or transaction must keep to one slot, and only
# the part of a key between the first `{` and the next `}` (its hash tag) picks the slot.
# Every key of a user and of the user's pairs carries the tag `{<user_id>}`: a turn's
# scripts touch the pair's keys together with the user's (supersede delivers and reads
# `pending_agent`), so one slot per user keeps each of them single-slot. Global
# structures a transaction or BLMOVE uses together share one fixed tag (`{bereit}`,
# `{kanal}`, `{pixie}`, `{arbeiter}`).

READY_TAG = "{bereit}"
CHANNEL_TAG = "{kanal}"
PIXIE_TAG = "{pixie}"
WORKER_TAG = "{arbeiter}"

LAYOUT_VERSION = 2
"""The key layout this code writes: 1 = no hash tags (the first layout), 2 = tagged."""


def user_tag(user_id: str) -> str:
    """`{<user_id>}`: the hash tag of every key of the user and the user's pairs. A user id
    never holds a brace (store/users.py allows letters, digits, `_.-`); one that did would
    move the key to another slot, so it is refused here rather than silently mis-slotted."""
    if "{" in user_id or "}" in user_id:
        raise ValueError(f"a user id must not contain braces: {user_id!r}")
    return "{" + user_id + "}"


def _user(user_id: str) -> str:
    return user_tag(user_id)


def _pair(pair: Pair) -> str:
    return f"{user_tag(pair.user_id)}:{pair.character_id}"


def pair_of_key(key: str, family: str) -> Pair | None:
    """The pair of a key `family:{u}:c` (or `family:{u}:c:<more>`), None if it is none."""
    head = family + ":{"
    if not key.startswith(head):
        return None
    user_id, brace, rest = key[len(head) :].partition("}:")
    if not brace or not user_id or not rest:
        return None
    return Pair(user_id, rest.split(":", 1)[0])


def layout_version() -> str:
    """The layout version of the keys (`schluessel_layout`): set once the start-up rename
    (store/key_layout.py) moved every old-format key to its tagged name."""
    return "schluessel_layout"


def layout_lease() -> str:
    """Lease while one process renames the old-format keys (API and worker may race)."""
    return "schluessel_layout:lauf"


# --- event model (docs/behaviour/events.md) ------------------------------------


def prompt_queue(pair: Pair) -> str:
    return f"prompt_queue:{_pair(pair)}"


def event_queue(pair: Pair) -> str:
    return f"event_queue:{_pair(pair)}"


def turn_marker(pair: Pair) -> str:
    return f"turn_laeuft:{_pair(pair)}"


def turn_event(pair: Pair) -> str:
    """The payload of the pair's last user-message event as its CharacterGraph run began
    (JSON `{turn_id, payload}`): what a regenerate runs again without Path 1
    (events/turn_controls.py). Expires with the session."""
    return f"turn_ereignis:{_pair(pair)}"


def answer_variants(pair: Pair) -> str:
    """The answers a regenerate kept of the pair's last turn (JSON `{turn_id, texte,
    gewaehlt}`; events/turn_controls.py). Expires with the session."""
    return f"antwort_varianten:{_pair(pair)}"


def turn_stop(pair: Pair) -> str:
    """A request to end the pair's running turn before its answer leaves (JSON
    `{turn_id, art}`: `gestoppt` or `zurueckgezogen`), read by the event consumer after
    every node (events/turn_controls.py)."""
    return f"turn_stopp:{_pair(pair)}"


TURN_STOP_TTL = 600
"""A stop request outlives no turn marker (its TTL is the same)."""


def carried_ids(pair: Pair) -> str:
    """List of nachrichten_ids whose unreleased run was superseded by newer utterances;
    the next block cut for the pair takes them over (events/queues.py)."""
    return f"uebertragene_ids:{_pair(pair)}"


def carried_rounds(pair: Pair) -> str:
    """How many runs in a row gave their ids to `carried_ids` (the supersede cap counts
    them; the next block cut takes the number over with the ids)."""
    return f"uebertragen_runden:{_pair(pair)}"


def parked_events(pair: Pair) -> str:
    """List of the pair's events held while the user has paused the character, oldest
    first; taken up again when it is activated, or each ended once it has waited too long
    (events/parked.py)."""
    return f"geparkte_ereignisse:{_pair(pair)}"


def paused_pairs() -> str:
    """Set of pairs that may have parked events, so the workers' sweep need not SCAN.
    Global; the scripts leave it alone (cross-slot): it is added to before an event is
    parked and pruned after the parked list emptied (events/parked.py)."""
    return "pausierte_paare"


def processing_list(pair: Pair, worker_id: str) -> str:
    """The list a worker moves one pair's claimed block or event into while it is being
    handled: per pair and worker, so it shares the pair's slot with the queue scripts
    that move entries in and out."""
    return f"event_processing:{_pair(pair)}:{worker_id}"


def processing_index(worker_id: str) -> str:
    """Set of the pairs (`u:c`) whose processing list of this worker may hold entries:
    added to before a claim, pruned by the worker itself, walked by orphan recovery."""
    return f"bearbeitung:{{{worker_id}}}"


def worker_heartbeat(worker_id: str) -> str:
    return f"worker_alive:{worker_id}"


def worker_registry() -> str:
    """Set of worker ids that may own a processing list (orphan recovery scans it)."""
    return f"worker_registry:{WORKER_TAG}"


def model_connection_version() -> str:
    """Counter raised whenever the page changes the model connection (`modell_verbindung`):
    every process compares it before a model call and reloads the row when it moved. No
    TTL; lost, the processes keep the connection they have until the next change."""
    return "modell_verbindung:version"


def active_pairs() -> str:
    """Set of pairs that have queued work, so consumers need not SCAN."""
    return f"aktive_paare:{READY_TAG}"


def ready_pairs() -> str:
    """List of pairs that may have become startable (an utterance or event queued, a run
    ended): workers wait on it with a blocking read instead of polling the active set."""
    return f"bereite_paare:{READY_TAG}"


def ready_taken(worker_id: str) -> str:
    """The entries of `ready_pairs` one worker took and is offering to its consumers (the
    reliable-queue pattern: a dead worker's entries go back to `ready_pairs`)."""
    return f"bereit_genommen:{READY_TAG}:{worker_id}"


def reminder_claim(entry_id: int) -> str:
    """Lease on one due reminder while a worker turns it into an impulse."""
    return f"erinnerung_laeuft:{entry_id}"


def library_pass(root_id: int) -> str:
    """Lease on one library root while a pass indexes it (the Pixie job and every worker's
    watcher: one pass per root at a time)."""
    return f"bibliothek_lauf:{root_id}"


LIBRARY_PROGRESS_TTL = 300
"""A pass's progress outlives its last report by 5 minutes: a pass that died leaves no
progress line behind for long, a finished one stays readable while the page polls."""


def library_progress(root_id: int) -> str:
    """Hash: how far the running (or last finished) pass over a library root got, for every
    API process to show (docs/behaviour/library.md#on-the-page)."""
    return f"bibliothek_fortschritt:{root_id}"


def event_seen(event_id: str) -> str:
    """Idempotency marker: an event id that has been handled."""
    return f"event_erledigt:{event_id}"


def turn_outcome(user_id: str, turn_id: str) -> str:
    """Idempotency marker: the turn already ended in a response or a failure. In the
    user's slot: the outcome script claims it together with the user's delivery keys."""
    return f"turn_ausgang:{_user(user_id)}:{turn_id}"


def human_tail(turn_id: str) -> str:
    """Path 1's salience results of a turn, handed to its CharacterGraph (a one-item
    list: pushed by the HumanGraph's tail, popped by the CharacterGraph's enricher)."""
    return f"pfad1_nachlauf:{turn_id}"


HUMAN_TAIL_TTL = 3_600
"""An unread tail result expires after an hour."""


# --- delivery ---------------------------------------------------------------------


def delivery_channel(user_id: str) -> str:
    """Pub/sub channel that fans a message out to every API process."""
    return f"zustellung:{_user(user_id)}"


def user_of_delivery_channel(channel: str) -> str:
    """The user id a delivery channel `zustellung:{<user_id>}` names."""
    return channel[len("zustellung:{") : -1]


def delivery_channel_pattern() -> str:
    """PSUBSCRIBE pattern matching every user's delivery channel."""
    return "zustellung:*"


def delivery_seq(user_id: str) -> str:
    return f"zustellung_seq:{_user(user_id)}"


def delivery_log(user_id: str) -> str:
    """Sorted set (score = seq) of recent messages kept for reconnect catch-up."""
    return f"zustellung_log:{_user(user_id)}"


# --- reach: outcomes on the person's other channels (docs/behaviour/reach.md) ---------

CHANNEL_SENT_TTL = 86_400
"""A delivery to one channel is remembered as long as its message stays in the log."""

CHANNEL_ORIGIN_TTL = 86_400
"""How long an utterance remembers the chat it came from (its answer goes back there)."""

LINK_CODE_TTL = 900
"""A one-time link code is valid for 15 minutes."""

CHANNEL_LEAD_TTL = 30
"""The lease of the one process that polls Telegram and sends to channels."""


def channel_users() -> str:
    """Set of user ids with at least one working linked channel: only their outcomes enter
    the outbox (a page-only user costs one SISMEMBER per outcome)."""
    return f"kanal_nutzer:{CHANNEL_TAG}"


def channel_outbox() -> str:
    """List of outcomes ({user_id, seq}) to hand to the person's other channels."""
    return f"kanal_ausgang:{CHANNEL_TAG}"


def channel_user_outbox(user_id: str) -> str:
    """A user's outcomes on their way to `channel_outbox`, in the user's slot: the outcome
    script appends here in the step that logs the message; the sender of the outcome moves
    it on, a sweep of `channel_outbox_users` moves what a crash left behind (reach/outbox.py)."""
    return f"kanal_postfach:{_user(user_id)}"


def channel_outbox_users() -> str:
    """Set of users whose `channel_user_outbox` may hold items (added before the outcome)."""
    return f"kanal_postfach_nutzer:{CHANNEL_TAG}"


def channel_outbox_work() -> str:
    """The outbox item the channel sender is working on (moved back if it died)."""
    return f"kanal_ausgang_arbeit:{CHANNEL_TAG}"


def channel_retry() -> str:
    """Sorted set (score = due time) of outbox items waiting after a transient failure."""
    return f"kanal_ausgang_wiederholung:{CHANNEL_TAG}"


def channel_sent(user_id: str, seq: int, link_id: int) -> str:
    """Set once message `seq` of the user went out on link `link_id`: never sent twice."""
    return f"kanal_gesendet:{_user(user_id)}:{seq}:{link_id}"


def channel_origin(message_id: str) -> str:
    """The link id an utterance arrived through; its outcome goes back there."""
    return f"kanal_herkunft:{message_id}"


def channel_lead() -> str:
    """Lease: the one process that polls Telegram and drains the outbox."""
    return "kanal_leitung"


def telegram_offset() -> str:
    """The next getUpdates offset (the update after the last one handled)."""
    return "telegram_offset"


TELEGRAM_UPDATE_TTL = 86_400
"""Telegram repeats a webhook post for at most a day."""


def telegram_update(update_id: int) -> str:
    """Set once a webhook update was handled: Telegram's repeat of it is dropped."""
    return f"telegram_update:{update_id}"


def link_code(code: str) -> str:
    """A one-time code → the user id it links a chat to (`novaberg telegram link`)."""
    return f"kanal_code:{code}"


def token_revoked_channel() -> str:
    """Pub/sub channel announcing the digests of revoked API tokens to every API process,
    which drops them from its token cache and closes their sockets at once
    (docs/behaviour/events.md#revoked-tokens)."""
    return "token_widerrufen"


# --- conversation state -----------------------------------------------------------


def session_turns(pair: Pair) -> str:
    return f"session:{_pair(pair)}:turns"


def session_summary(pair: Pair) -> str:
    return f"session:{_pair(pair)}:summary"


def nova_state(pair: Pair) -> str:
    return f"nova_state:{_pair(pair)}"


def stance(pair: Pair) -> str:
    """Hash of the last computed stance (docs/behaviour/nodes.md#stance); no TTL."""
    return f"haltung:{_pair(pair)}"


def hypothesis_detail(pair: Pair) -> str:
    """JSON of the last gv_detail; the next turn's enricher reads its cluster; no TTL."""
    return f"gv:detail:{_pair(pair)}"


def previous_turn(pair: Pair) -> str:
    """JSON {antwort[:2000], modus} of the last released answer; no TTL."""
    return f"gv:vorturn:{_pair(pair)}"


def situation(pair: Pair) -> str:
    """JSON of the running understanding of the conversation (Sachlage), SITUATION_TTL."""
    return f"sachlage:{_pair(pair)}"


def situation_history(pair: Pair) -> str:
    """Hash turn_id → JSON of the understanding as that turn left it (sachlage_verlauf);
    an impulse's bridge reads the triggering turn's entry. SITUATION_TTL."""
    return f"sachlage_verlauf:{_pair(pair)}"


def pending_agent(user_id: str) -> str:
    return f"pending_agent:{_user(user_id)}"


def offer(pair: Pair) -> str:
    """JSON of the offer Nova's last answer made and the person has not answered yet
    (`angebot`: dienst, objekt, eigenschaften, satz), OFFER_TTL."""
    return f"angebot:{_pair(pair)}"


def last_activity(user_id: str) -> str:
    return f"last_activity:{_user(user_id)}"


def drive_snapshot(pair: Pair) -> str:
    """JSON goal-panel snapshot the dispatcher writes after every CharacterGraph run."""
    return f"drive:short_term:{_pair(pair)}"


# --- short-term memory (docs/behaviour/memory.md#short-term-memory) -------------


def short_term_entry(pair: Pair, epoch_ms: int) -> str:
    return f"kzg:{_pair(pair)}:{epoch_ms}"


def short_term_index(pair: Pair) -> str:
    """Set of a pair's live KZG keys; lets retrieval skip SCAN (no RediSearch)."""
    return f"kzg_index:{_pair(pair)}"


def short_term_index_version(pair: Pair) -> str:
    """Counter bumped whenever a pair's KZG index changes (lets readers keep a cache)."""
    return f"kzg_index_version:{_pair(pair)}"


def short_term_reembedded(pair: Pair) -> str:
    """Counter bumped whenever an entry of the pair gets a new embedding (a correction), so
    readers drop the vectors they cached for the pair's keys."""
    return f"kzg_umbettung:{_pair(pair)}"


def promotion_queue(user_id: str) -> str:
    return f"queue:{_user(user_id)}"


def promotion_users() -> str:
    """Set of user ids with promotion jobs queued, so the promotion job need not SCAN."""
    return "queue_nutzer"


def promotion_working(user_id: str) -> str:
    return f"queue:{_user(user_id)}:arbeit"


def promotion_failed(user_id: str) -> str:
    return f"queue:{_user(user_id)}:gescheitert"


def promotion_attempts(user_id: str) -> str:
    return f"queue:{_user(user_id)}:versuche"


def profile_dirty(pair: Pair) -> str:
    return f"hash_dirty:{_pair(pair)}"


# --- background (docs/behaviour/pixie.md) --------------------------------------


def pixie_schedule(job: str) -> str:
    return f"pixie:{PIXIE_TAG}:schedule:{job}"


def pixie_running(lane: str) -> str:
    return f"pixie:{PIXIE_TAG}:running:{lane}"


def pixie_paused() -> str:
    return f"pixie:{PIXIE_TAG}:paused"


def pixie_failed() -> str:
    return f"pixie:{PIXIE_TAG}:gescheitert"


# --- impulses: Nova acting on her own (docs/behaviour/pixie.md#impulses) ---------

IMPULSE_BURST_TTL = 3_600
"""The burst count (impulses without a reply) is forgotten after an hour."""

PRESENCE_TTL = 20
"""A user counts as connected while an API process refreshed this mark recently."""

MOMENTUM_TTL = 300
"""The last run's momentum is a trigger for five minutes."""


def impulse_stack(pair: Pair) -> str:
    """Hash entry id → JSON: what Nova might say on her own to this pair."""
    return f"shadow_stack:{_pair(pair)}"


def impulse_stack_pairs() -> str:
    """Set of pairs whose stack may hold entries, so delivery need not SCAN."""
    return "shadow_stack_paare"


def impulse_failures(pair: Pair) -> str:
    """Hash entry id → JSON {versuche, grund, naechster_versuch}: failed deliveries."""
    return f"shadow_stack_fehler:{_pair(pair)}"


def impulse_parked(pair: Pair) -> str:
    """Hash entry id → JSON: entries taken off the stack after repeated failed deliveries."""
    return f"shadow_stack_geparkt:{_pair(pair)}"


def impulse_parked_pairs() -> str:
    """Set of pairs that may have parked entries (operator status)."""
    return "shadow_stack_geparkt_paare"


def impulse_burst(pair: Pair) -> str:
    """Impulses delivered since the user last wrote (reset by a user message)."""
    return f"shadow_burst_count:{_pair(pair)}"


def impulse_claim(pair: Pair) -> str:
    """Lease while one worker turns a stack entry into an impulse for the pair."""
    return f"impuls_laeuft:{_pair(pair)}"


def presence(user_id: str) -> str:
    """Set while the user has a WebSocket open on some API process."""
    return f"verbunden:{_user(user_id)}"


def momentum(pair: Pair) -> str:
    """low/mid/high of the pair's last character run."""
    return f"momentum:{_pair(pair)}"


# --- model gate, wire name graph_run_lock (docs/behaviour/llm.md#model-gate) ---


def model_gate(backend: str) -> str:
    """Sorted set of slot holders (score = lease expiry) for one model backend; tagged by
    the backend, so its acquire script and `model_gate_waiting` share a slot."""
    return f"graph_run_lock:{{{backend}}}"


def model_gate_waiting(backend: str) -> str:
    """Set while a person's turn waits for a slot of the backend (background yields)."""
    return f"graph_run_lock:{{{backend}}}:nutzer_wartet"
