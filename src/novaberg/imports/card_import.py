"""A character card becomes a character, usable at once by its `character_id`.

The card's fields go into `characters` (the responder's system prompt is built from them:
agents/turn_context.py); each lorebook entry becomes a long-term node of the importing
person's pair with the character (`dimension` "wissen", its keys as themes, provenance
`karte:{user}:{character}:{entry}`), so the hybrid search and the enricher find it by its
keys or its meaning. The character belongs to the importing person (store/characters.py):
another person who imports the same card gets a character of their own, under the same id if
they like. Importing the same card again (same digest) adds only what is missing; a different
card under a taken id (the person's own or a shared one) is refused.

Bounded work: the character is written in one short transaction, then the lore in batches of
`LORE_BATCH` — each batch embedded with no pool connection held, then written as one
multi-row INSERT (store/long_term_nodes.py `insert_nodes`, its own short transaction). An import that
fails halfway (the embedding server gone, the process stopped) leaves the character and the
batches written before; the same import again skips what is stored, embeds only the rest and
completes it (the report of that run says `neu: false` and counts the lore it added).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from psycopg_pool import AsyncConnectionPool

from novaberg.imports.cards import ID_PATTERN, Card, CardError, LoreEntry, character_id_for
from novaberg.llm.base import LLM
from novaberg.memory.curve import long_term_weight
from novaberg.memory.search.results import CARD_KEY_PREFIX
from novaberg.memory.short_term.entry_text import embed_text
from novaberg.pair import Pair
from novaberg.store import characters
from novaberg.store.characters import NewCharacter
from novaberg.store.long_term_nodes import NewNode, insert_nodes
from novaberg.store.long_term_provenance import stored_sources

LORE_DIMENSION: Final = "wissen"
LORE_MEMORY_TYPE: Final = "lang"
LORE_OBSERVER: Final = "character"
AVATAR_MAX_BYTES: Final = 4 * 1024 * 1024
"""A card's picture is kept as the avatar up to this size (the page shows it small; a
larger one is left out and the character gets the generated initial)."""
AVATAR_TYPE: Final = "image/png"

LORE_BATCH: Final = 128
"""Lorebook entries per embedding call and per INSERT: a 2,000-entry world book is 16 short
transactions, and a pool connection is back within milliseconds of each."""

LORE_SALIENCE: Final = 1.0
"""A lorebook entry is knowledge the card's author wants kept: the strongest raw weight
(decay still applies; what is never used fades over years, like any node)."""


class CardConflict(ValueError):
    """The character id is taken by another card or character."""


@dataclass
class CardReport:
    character_id: str
    name: str
    created: bool
    lore_new: int
    lore_total: int
    avatar: bool = False

    def as_json(self) -> dict[str, object]:
        return {
            "character_id": self.character_id,
            "name": self.name,
            "neu": self.created,
            "lore_neu": self.lore_new,
            "lore": self.lore_total,
            "avatar": self.avatar,
        }


def lore_key(user_id: str, character_id: str, entry_id: str) -> str:
    return f"{CARD_KEY_PREFIX}{user_id}:{character_id}:{entry_id}"


def resolve_id(card: Card, wanted: str | None) -> str:
    character_id = wanted.strip() if wanted else character_id_for(card.name)
    if not ID_PATTERN.match(character_id):
        raise CardError(
            f"cannot use {character_id!r} as a character id (1-64 of A-Z a-z 0-9 _ . -); "
            "choose one with --id"
        )
    return character_id


async def import_card(
    pool: AsyncConnectionPool,
    model: LLM,
    card: Card,
    *,
    user_id: str,
    now: datetime,
    character_id: str | None = None,
    max_characters: int | None = None,
) -> CardReport:
    """Create the character, owned by `user_id`, and its lore for `user_id`; `CardConflict`
    if the id is taken (by another card of the user or a shared character),
    `characters.TooManyCharacters` if the user owns `max_characters` already."""
    cid = resolve_id(card, character_id)
    picture = card.image if card.image and len(card.image) <= AVATAR_MAX_BYTES else None
    async with pool.connection() as conn, conn.transaction():
        created = await characters.create(
            conn,
            user_id,
            NewCharacter(
                character_id=cid,
                name=card.name,
                description=card.description,
                personality=card.personality,
                scenario=card.scenario,
                first_message=card.first_message,
                alternate_greetings=card.alternate_greetings,
                example_dialogue=card.example_dialogue,
                system_prompt=card.system_prompt,
                card=card.raw,
                card_hash=card.digest,
                avatar=picture,
                avatar_type=AVATAR_TYPE,
            ),
            limit=max_characters,
        )
        if not created:
            existing = await characters.visible(conn, user_id, cid)
            if existing is None or existing.card_hash != card.digest:
                raise CardConflict(
                    f"character {cid!r} exists already (another card or a built-in "
                    "character); import it under another id with --id"
                )
            if picture is not None:
                await characters.add_missing_avatar(conn, user_id, cid, picture, AVATAR_TYPE)
        has_avatar = await characters.has_avatar(conn, user_id, cid)
    new_lore = await store_lore(pool, model, Pair(user_id, cid), card.lore, now)
    return CardReport(cid, card.name, created, new_lore, len(card.lore), has_avatar)


async def store_lore(
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    lore: Sequence[LoreEntry],
    now: datetime,
    batch: int = LORE_BATCH,
) -> int:
    """Write the entries the pair lacks, batch by batch; how many were new. No connection is
    held while a batch is embedded."""
    weight = long_term_weight(LORE_SALIENCE)
    keyed: dict[str, LoreEntry] = {}
    for entry in lore:  # an id repeated in the card: its first entry
        keyed.setdefault(lore_key(pair.user_id, pair.character_id, entry.ident), entry)
    entries = list(keyed.items())
    new = 0
    for start in range(0, len(entries), batch):
        chunk = entries[start : start + batch]
        async with pool.connection() as conn:
            stored = await stored_sources(conn, [key for key, _ in chunk])
        fresh = [(key, entry) for key, entry in chunk if key not in stored]
        if not fresh:
            continue
        vectors = await model.embed([embed_text(list(e.keys), e.content) for _, e in fresh])
        nodes = [
            _lore_node(pair, key, entry, vector, weight, now)
            for (key, entry), vector in zip(fresh, vectors, strict=True)
        ]
        async with pool.connection() as conn:
            new += sum(node_id is not None for node_id in await insert_nodes(conn, nodes))
    return new


def _lore_node(
    pair: Pair, key: str, entry: LoreEntry, vector: list[float], weight: float, now: datetime
) -> NewNode:
    return NewNode(
        source_key=key,
        user_id=pair.user_id,
        character_id=pair.character_id,
        observer=LORE_OBSERVER,
        text=entry.content,
        embedding=vector,
        dimension=LORE_DIMENSION,
        raw_weight=LORE_SALIENCE,
        absolute_weight=weight,
        decayed_weight=weight,
        frequency=1,
        created_at=now,
        reinforced_at=now,
        themes=list(entry.keys),
        memory_type=LORE_MEMORY_TYPE,
    )
