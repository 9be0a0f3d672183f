"""The bound offer: what Nova offered to do in her last answer, waiting for the person's yes
(docs/behaviour/agents.md#offers).

Why it lives in Redis (`angebot:{u}:{c}`, `keys.OFFER_TTL`) and not in the graph: the yes
comes in the *next* turn, possibly in another worker process — the same reason an agent's
open question lives there (agents/pending.py). It is per pair, not per user: the offer is
Nova's, made in this conversation.

Who touches it:

- the CharacterGraph's dispatcher binds the offer its released answer made, or closes the
  one the turn found (`bind_offer`, `close_offer`): an offer is open only while the answer
  that made it is the conversation's last word;
- db_access reads it with the turn context (`offer_from_raw`), the router reads the
  person's consent against it (graph/offer_chain.py);
- the agent's dispatch takes it, read and deleted at once, right before the offered agent
  runs (`take_offer`): a yes executes its offer once, even if the turn runs again;
- the offered agent's classifier sees it as the `[OBJEKT]` and `[ZUSTIMMUNG]` blocks
  (`offer_blocks`), which are empty — and so left out of the prompt — on every other run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys

log = logging.getLogger(__name__)

__all__ = [
    "CONTEXT_KEY",
    "Offer",
    "bind_offer",
    "close_offer",
    "offer_blocks",
    "offer_context",
    "offer_from_raw",
    "take_offer",
]

CONTEXT_KEY: Final = "angebot"
"""The catalogued `AgentState.context` key that carries an accepted offer to the agent."""

AGENT: Final = "dienst"
OBJECT: Final = "objekt"
PROPERTIES: Final = "eigenschaften"
SENTENCE: Final = "satz"
CONSENT: Final = "zustimmung"
"""Wire fields of the stored offer (and of the agent context, plus the consent)."""


@dataclass(frozen=True, slots=True)
class Offer:
    """One offer: which agent would act (`agent`, its wire name), on which thing (`object`,
    with the properties the situation knew of it), and the sentence of Nova's answer that
    made it (`sentence`: what the person read and says yes to)."""

    agent: str
    object: str
    sentence: str
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {
            AGENT: self.agent,
            OBJECT: self.object,
            PROPERTIES: dict(self.properties),
            SENTENCE: self.sentence,
        }

    def object_text(self) -> str:
        """The object as the classifier reads it: "Brot (menge: 2)"."""
        known = ", ".join(f"{key}: {value}" for key, value in self.properties.items())
        return f"{self.object} ({known})" if known else self.object


def offer_from_raw(raw: Any, pair: Pair) -> Offer | None:
    """The stored offer, or None. An unreadable value is logged and reported as None: it
    can execute nothing."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        log.warning("angebot:%s holds unreadable JSON; ignored", pair)
        return None
    if not isinstance(data, dict):
        log.warning("angebot:%s is not an object; ignored", pair)
        return None
    agent, name, sentence = (str(data.get(k) or "").strip() for k in (AGENT, OBJECT, SENTENCE))
    if not (agent and name and sentence):
        log.warning("angebot:%s lacks dienst, objekt or satz; ignored", pair)
        return None
    properties = data.get(PROPERTIES)
    return Offer(
        agent=agent,
        object=name,
        sentence=sentence,
        properties=(
            {str(k): str(v) for k, v in properties.items()} if isinstance(properties, dict) else {}
        ),
    )


async def bind_offer(redis: aioredis.Redis, pair: Pair, offer: Offer) -> None:
    """Bind `offer` to the pair (replacing any older one) for `OFFER_TTL` seconds."""
    await redis.set(
        keys.offer(pair), json.dumps(offer.to_wire(), ensure_ascii=False), ex=keys.OFFER_TTL
    )


async def close_offer(redis: aioredis.Redis, pair: Pair) -> None:
    """Close the pair's offer, answered or passed by."""
    await redis.delete(keys.offer(pair))


async def take_offer(redis: aioredis.Redis, pair: Pair) -> Offer | None:
    """Read and delete the pair's offer at once: the yes that takes it executes it once."""
    return offer_from_raw(await redis.getdel(keys.offer(pair)), pair)


def offer_context(offer: Offer, consent: str) -> dict[str, Any]:
    """The agent context entry of an accepted offer (`CONTEXT_KEY`)."""
    return {**offer.to_wire(), CONSENT: consent}


def offer_blocks(context: Mapping[str, Any] | None) -> dict[str, str]:
    """The `[OBJEKT]` / `[ZUSTIMMUNG]` placeholders of an offerable agent's classifier:
    filled from an accepted offer, empty otherwise (the optional blocks then vanish)."""
    entry = (context or {}).get(CONTEXT_KEY)
    if not isinstance(entry, Mapping):
        return {"objekt": "", "angebot_satz": "", "zustimmung": ""}
    offer = Offer(
        agent=str(entry.get(AGENT) or ""),
        object=str(entry.get(OBJECT) or ""),
        sentence=str(entry.get(SENTENCE) or ""),
        properties=dict(entry.get(PROPERTIES) or {}),
    )
    return {
        "objekt": offer.object_text(),
        "angebot_satz": offer.sentence,
        "zustimmung": str(entry.get(CONSENT) or ""),
    }
