"""Which PostgreSQL tables travel in an export, how a person's rows are found in each,
and — as a record — which tables stay behind and why.

Order matters: a restore inserts in this order, so a row's foreign keys (timeline before
notes, nodes before edges, objects before their properties) already exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from novaberg.store.pipeline_log import HISTORY_KINDS

_USER: Final = "user_id = %(u)s"
_CHAR: Final = "character_id = %(c)s"


@dataclass(frozen=True)
class TableSpec:
    """One exported table. `owner` selects a person's rows (`%(u)s` = the user id),
    `character` narrows them to one character (`%(c)s`); None = the rows belong to the
    person, not to a pair, and travel whole with a one-character export too."""

    name: str
    what: str
    owner: str = _USER
    character: str | None = _CHAR
    user_columns: tuple[str, ...] = ("user_id",)
    """Columns holding the user id (rewritten by `restore --as-user`)."""
    kzg_columns: tuple[str, ...] = ()
    """Columns holding a short-term memory key `kzg:{<user>}:<character>:<ms>` (or the
    untagged `kzg:<user>:…` of rows written before the hash tags)."""
    has_id: bool = True
    """The primary key is a serial `id` (kept on restore; its sequence is moved past it)."""


def _via(parent: str, column: str, condition: str) -> str:
    return f"{column} IN (SELECT id FROM {parent} WHERE {condition})"


def _kzg_prefix(with_character: bool) -> str:
    """Keys of the user in both layouts: tagged `kzg:{u}:…` and the older `kzg:u:…`."""
    tail = " || %(c)s || ':'" if with_character else ""
    return (
        f"(starts_with(kzg_key, 'kzg:{{' || %(u)s || '}}:'{tail})"
        f" OR starts_with(kzg_key, 'kzg:' || %(u)s || ':'{tail}))"
    )


_HISTORY = "art IN (" + ", ".join(f"'{kind}'" for kind in HISTORY_KINDS) + ")"

TABLES: Final[tuple[TableSpec, ...]] = (
    TableSpec("users", "the person", character=None, has_id=False),
    TableSpec("nutzer_persona", "persona", character=None, has_id=False),
    TableSpec(
        "characters",
        "own characters (avatars as files)",
        owner="besitzer = %(u)s",
        user_columns=("besitzer",),
        has_id=False,
    ),
    TableSpec("charakter_aktivierung", "paused/active characters", has_id=False),
    TableSpec("charakter_anweisungen", "identity (character instructions)", character=None),
    TableSpec("charakter_hash", "profiles", has_id=False),
    TableSpec("direktiven", "directives", character=None),
    TableSpec("impuls_einstellungen", "impulse settings", has_id=False),
    TableSpec("kanal_einstellungen", "channel settings", character=None, has_id=False),
    TableSpec("timeline", "appointments", character=None),
    TableSpec("notizen", "notes and tasks", character=None),
    TableSpec("entitaeten", "named entities of memories"),
    TableSpec("lzg_knoten", "long-term memory", kzg_columns=("kzg_quell_key",)),
    TableSpec(
        "lzg_kanten",
        "long-term memory links",
        owner=_via("lzg_knoten", "knoten_a_id", _USER),
        character=_via("lzg_knoten", "knoten_a_id", _CHAR),
        user_columns=(),
    ),
    TableSpec(
        "lzg_befoerderung",
        "which short-term entries became long-term",
        owner=_kzg_prefix(False),
        character=_kzg_prefix(True),
        user_columns=(),
        kzg_columns=("kzg_key",),
        has_id=False,
    ),
    TableSpec("lzg_geloescht", "forgotten memories", kzg_columns=("kzg_key",), has_id=False),
    TableSpec("gespraechsarchiv", "conversation archive"),
    TableSpec("ziele", "goals"),
    TableSpec("shadow_auftrag", "impulse stack (Nova's own intentions)"),
    TableSpec("delegation", "research and delegated tasks"),
    TableSpec("praegung_faden", "imprint threads"),
    TableSpec("sachlage_objekt", "situation objects"),
    TableSpec(
        "sachlage_eigenschaft",
        "properties of situation objects",
        owner=_via("sachlage_objekt", "objekt_id", _USER),
        character=_via("sachlage_objekt", "objekt_id", _CHAR),
        user_columns=(),
    ),
    TableSpec(
        "sachlage_objekt_turn",
        "situation objects per turn",
        owner=_via("sachlage_objekt", "objekt_id", _USER),
        character=_via("sachlage_objekt", "objekt_id", _CHAR),
        user_columns=(),
        has_id=False,
    ),
    TableSpec("verb_mappings", "learned phrasings of agent commands", character=None),
    TableSpec("chats", "the chats of a pair (new chat, chat list)", has_id=False),
    TableSpec("chat_abschnitte", "when each chat was open (which turns it holds)", has_id=False),
    TableSpec("dateien_wurzeln", "library folder approvals (not the files)", character=None),
    TableSpec(
        "pipeline_log",
        "conversation history (answered and failed turns)",
        owner=f"{_USER} AND {_HISTORY}",
    ),
)

LEFT_OUT: Final[dict[str, str]] = {
    "api_tokens": "secrets of this server; the person signs in anew (`novaberg user add`)",
    "kanal_verknuepfung": "links to this server's messenger bots; re-linked on the new one",
    "dateien_index": "the library's files stay on disk; re-indexed from the approved folders",
    "dateien_abschnitte": "as dateien_index: rebuilt by indexing the files",
    "archiv_lexeme": "word statistics kept by triggers; rebuilt as the archive is restored",
    "archiv_paar": "as archiv_lexeme",
    "lzg_paar_groesse": "a count kept by triggers; rebuilt as long-term memory is restored",
    "bibliothek_lexeme": "library word statistics, rebuilt by indexing the files",
    "bibliothek_person": "as bibliothek_lexeme",
    "pipeline_log (other rows)": "diagnostics of single turns, not the person's data",
    "hintergrund_log": "diagnostics of background jobs",
    "impuls_protokoll": "diagnostics of impulse decisions",
    "pending_writes_log": "diagnostics of deferred writes",
    "offene_fragen_aufgriff": "diagnostics of offered questions",
    "verbindung": "diagnostics (which memory a turn touched)",
    "modell_verbindung": "the installation's model connection, set by its operator",
    "schema_migrations": "installation state, not a person's",
    "schema_settings": "installation state, not a person's",
}
"""Every other table of the schema, with the reason it does not travel (docs/export.md;
tests/integration/transfer/test_export_coverage.py checks that the two lists cover the
schema)."""
