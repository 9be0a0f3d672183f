"""Messages from Telegram: long polling (`getUpdates`), one update at a time, in order.

A private chat's text goes through the same intake as the page (`Accept`, given by the API
process: rate limit, validation, the prompt queue; blocks, supersede and exactly one
outcome follow from there). The utterance remembers the chat it came from
(`kanal_herkunft:{id}`), so its outcome goes back to that chat (reach/routing.py). Service
replies (linked, not linked, which character, "not yet" for voice and photos) are sent
directly; they are not outcomes.

The offset of the next update is kept in Redis after each update, so a restart or the next
lease holder goes on where this one stopped (an update handled but not yet counted when
the process died is handled again: at least once).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from telegram import Bot, Message, Update
from telegram.constants import ChatType
from telegram.error import TelegramError

from novaberg.events.model import new_id
from novaberg.reach import linking, origins
from novaberg.store import channel_links, keys
from novaberg.store.channel_links import TELEGRAM, ChannelLink
from novaberg.store.characters import load_visible_ids

log = logging.getLogger(__name__)

Accept = Callable[[str, str, str, str], Awaitable[str | None]]
"""(user, character, text, message id) → None if queued, else the refusal in words."""

LINKED = "Verbunden. Du schreibst jetzt mit {character}. Mit /character wählst du jemand anderen."
START_HELP = (
    "Hallo! Um diesen Chat mit Novaberg zu verbinden, lass dir einen Code geben "
    "(`novaberg telegram link --user NAME`) und schick ihn mir als: /start CODE"
)
BAD_CODE = "Dieser Code ist unbekannt oder abgelaufen. Lass dir bitte einen neuen geben."
NOT_LINKED = (
    "Dieser Chat ist noch nicht verbunden. Lass dir einen Code geben "
    "(`novaberg telegram link --user NAME`) und schick ihn mir als: /start CODE"
)
NOT_YET = (
    "Sprachnachrichten, Bilder und Dateien kann ich hier noch nicht lesen. "
    "Schreib mir bitte in Worten."
)
CHARACTERS = "Du schreibst mit {character}. Zur Wahl: {choices}. Wechseln: /character NAME"
CHARACTER_SET = "Du schreibst jetzt mit {character}."
CHARACTER_UNKNOWN = "Den Charakter {character} kenne ich nicht. Zur Wahl: {choices}."

POLL_PAUSE_MAX = 60.0
"""Longest pause after failed polls (it doubles from one second)."""


class TelegramPoller:
    def __init__(
        self,
        bot: Bot,
        redis: aioredis.Redis,
        pool: AsyncConnectionPool,
        accept: Accept,
        *,
        default_character: str,
        poll_timeout: int = 30,
    ) -> None:
        self.bot = bot
        self.redis = redis
        self.pool = pool
        self.accept = accept
        self.default_character = default_character
        self.poll_timeout = poll_timeout

    async def run(self, leading: Callable[[], bool]) -> None:
        """Poll while `leading()` holds; failures pause with backoff, never end the loop."""
        pause = 1.0
        while leading():
            try:
                await self.poll_once()
                pause = 1.0
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("telegram poll failed (%s); again in %g s", exc, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, POLL_PAUSE_MAX)

    async def poll_once(self) -> int:
        """One getUpdates call and its updates handled; returns how many."""
        offset = int(await self.redis.get(keys.telegram_offset()) or 0)
        updates = await self.bot.get_updates(
            offset=offset or None, timeout=self.poll_timeout, allowed_updates=["message"]
        )
        for update in updates:
            try:
                await self.handle(update)
            except Exception:
                log.exception("telegram update %d not handled", update.update_id)
            await self.redis.set(keys.telegram_offset(), update.update_id + 1)
        return len(updates)

    async def handle(self, update: Update) -> None:
        message = update.message
        if message is None or message.chat.type != ChatType.PRIVATE:
            return
        target = str(message.chat.id)
        text = (message.text or "").strip()
        if text.startswith("/start"):
            await self._start(message, target, text.removeprefix("/start"))
            return
        link = await channel_links.by_target(self.pool, TELEGRAM, target)
        if link is None:
            await self._reply(message, NOT_LINKED)
            return
        if not link.working:  # they write again: the chat works again (e.g. unblocked)
            link = await channel_links.link(
                self.pool, self.redis, link.user_id, TELEGRAM, target, link.character_id
            )
        if text.startswith("/character"):
            await self._character(message, link, text.removeprefix("/character").strip())
        elif not text:
            await self._reply(message, NOT_YET)
        else:
            await self._utterance(message, link, text)

    async def _start(self, message: Message, target: str, code: str) -> None:
        if not code.strip():
            await self._reply(message, START_HELP)
            return
        user_id = await linking.redeem(self.redis, code)
        if user_id is None:
            await self._reply(message, BAD_CODE)
            return
        link = await channel_links.link(
            self.pool, self.redis, user_id, TELEGRAM, target, self.default_character
        )
        log.info("telegram chat linked to %s (link %d)", user_id, link.id)
        await self._reply(message, LINKED.format(character=link.character_id))

    async def _character(self, message: Message, link: ChannelLink, wanted: str) -> None:
        visible = sorted(await load_visible_ids(self.pool, link.user_id))
        choices = ", ".join(visible)
        if not wanted:
            await self._reply(
                message, CHARACTERS.format(character=link.character_id, choices=choices)
            )
        elif wanted in visible:
            await channel_links.set_character(self.pool, link.id, wanted)
            await self._reply(message, CHARACTER_SET.format(character=wanted))
        else:
            await self._reply(message, CHARACTER_UNKNOWN.format(character=wanted, choices=choices))

    async def _utterance(self, message: Message, link: ChannelLink, text: str) -> None:
        message_id = new_id()
        # before the intake: the outcome may be ready before this coroutine runs again
        await origins.note(self.redis, message_id, link.id)
        refusal = await self.accept(link.user_id, link.character_id, text, message_id)
        if refusal is not None:
            await origins.forget(self.redis, message_id)
            await self._reply(message, refusal)

    async def _reply(self, message: Message, text: str) -> None:
        try:
            await self.bot.send_message(chat_id=message.chat.id, text=text)
        except TelegramError as exc:
            log.warning("telegram reply to chat %s not sent: %s", message.chat.id, exc)
