"""A character card becomes a character, usable at once by its `character_id`.

The card's fields go into `characters` (the responder's system prompt is built from them:
graph/nodes/db_access.py); each lorebook entry becomes a long-term node of the importing
person's pair with the character (`dimension` "wissen", its keys as themes, provenance
`karte:{user}:{character}:{entry}`), so the hybrid search and the enricher find it by its
keys or its meaning. Everything is written in one transaction: a failure stores nothing.
The character belongs to the importing person (store/characters.py): another person who
imports the same card gets a character of their own, under the same id if they like.
Importing the same card again (same digest) adds only what is missing; a different card
under a taken id (the person's own or a shared one) is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from psycopg_pool import AsyncConnectionPool

from novaberg.imports.cards import ID_PATTERN, Card, CardError, character_id_for
from novaberg.llm.base import LLM
from novaberg.memory.curve import long_term_weight
from novaberg.memory.search import CARD_KEY_PREFIX
from novaberg.memory.short_term import embed_text
from novaberg.store import characters, lzg
from novaberg.store.characters import NewCharacter
from novaberg.store.keys import Pair

LORE_DIMENSION: Final = "wissen"
LORE_MEMORY_TYPE: Final = "lang"
LORE_OBSERVER: Final = "character"
AVATAR_MAX_BYTES: Final = 4 * 1024 * 1024
"""A card's picture is kept as the avatar up to this size (the page shows it small; a
larger one is left out and the character gets the generated initial)."""
AVATAR_TYPE: Final = "image/png"

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
    vectors = (
        await model.embed([embed_text(list(e.keys), e.content) for e in card.lore])
        if card.lore
        else []
    )
    weight = long_term_weight(LORE_SALIENCE)
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
        pair = Pair(user_id, cid)
        new_lore = 0
        for entry, vector in zip(card.lore, vectors, strict=True):
            node_id = await lzg.insert_node(
                conn,
                {
                    "kzg_quell_key": lore_key(user_id, cid, entry.ident),
                    "user_id": pair.user_id,
                    "character_id": pair.character_id,
                    "beobachter": LORE_OBSERVER,
                    "inhalt": entry.content,
                    "embedding": vector,
                    "dimension": LORE_DIMENSION,
                    "gewicht_roh": LORE_SALIENCE,
                    "gewicht_absolut": weight,
                    "gewicht_decay": weight,
                    "haeufigkeit": 1,
                    "erstellt_am": now,
                    "verstaerkt_am": now,
                    "themen": list(entry.keys),
                    "gedaechtnistyp": LORE_MEMORY_TYPE,
                    "entitaet_ids": [],
                    "intentionen": "[]",
                    "emotion": "",
                    "emotions_vektor": "",
                    "modus": "",
                    "sprach_stil": "",
                    "beziehungs_dynamik": "",
                    "tone": "",
                },
            )
            new_lore += node_id is not None
        has_avatar = await characters.has_avatar(conn, user_id, cid)
    return CardReport(cid, card.name, created, new_lore, len(card.lore), has_avatar)
