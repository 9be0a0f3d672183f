"""The page's intake as a linked chat uses it (reach/telegram_poll.py): the same rate limit
per person, the same checks, the same queue; a refusal comes back in words for the chat.
And the process's `Reach` built from the settings: Web Push always, Telegram with a token."""

from __future__ import annotations

import logging
from typing import Any

from psycopg_pool import AsyncConnectionPool
from redis.exceptions import RedisError

from novaberg.config import Settings
from novaberg.events.intake import IntakeError
from novaberg.reach.lead import Reach
from novaberg.reach.push import PushChannel
from novaberg.reach.telegram_poll import Accept
from novaberg.reach.vapid import load_or_create
from novaberg.store import characters

log = logging.getLogger(__name__)

CHANNEL_CLIENT_ID = "telegram"
"""`client_id` of utterances from Telegram (the page shows where a message came from)."""

REFUSALS = {
    "text_zu_lang": "Das ist zu lang für eine Nachricht. Teil es bitte auf.",
    "charakter_unbekannt": "Diesen Charakter gibt es nicht (mehr). Wähle mit /character einen.",
}
TOO_FAST = "Langsamer bitte, so schnell komme ich nicht mit. Schick es gleich noch einmal."
UNAVAILABLE = "Ich kann gerade nichts annehmen. Versuch es bitte gleich noch einmal."


def channel_accept(services: Any) -> Accept:
    """`Accept` over the chat services (`api.chat.ChatServices`)."""

    async def accept(user_id: str, character_id: str, text: str, message_id: str) -> str | None:
        if services.limiter.retry_after(f"{CHANNEL_CLIENT_ID}:{user_id}"):
            return TOO_FAST
        try:
            await services.intake.accept(
                user_id, character_id, text, CHANNEL_CLIENT_ID, message_id=message_id
            )
        except IntakeError as exc:
            return REFUSALS.get(exc.code, f"Das konnte ich nicht annehmen ({exc.code}).")
        except (RedisError, TimeoutError) as exc:
            log.error("intake could not store a telegram utterance: %r", exc)
            return UNAVAILABLE
        return None

    return accept


def character_names(pool: AsyncConnectionPool) -> Any:
    """(user, character) → the character's name as the person sees it (its id if none)."""

    async def name(user_id: str, character_id: str) -> str:
        async with pool.connection() as conn:
            found = await characters.visible(conn, user_id, character_id)
        return found.name if found is not None and found.name else character_id

    return name


def push_channel(settings: Settings, pool: AsyncConnectionPool) -> PushChannel:
    """Web Push with the installation's VAPID keys (made on first start, reach/vapid.py)."""
    keys = load_or_create(settings.home)
    return PushChannel(keys, settings.push_contact, character_names(pool))


def channel_reach(
    settings: Settings, redis: Any, pool: AsyncConnectionPool, services: Any
) -> Reach:
    """The process's `Reach`: Web Push always, Telegram when a bot token is configured."""
    return Reach(
        redis,
        pool,
        channel_accept(services),
        token=settings.telegram_token,
        api_url=settings.telegram_api_url,
        default_character=settings.character,
        poll_timeout=settings.telegram_poll_timeout,
        webhook_url=settings.telegram_webhook_url,
        push=push_channel(settings, pool),
    )
