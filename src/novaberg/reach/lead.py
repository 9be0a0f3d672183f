"""Where Telegram runs in the process model: in the API processes, one of them at a time.

With `NOVABERG_TELEGRAM_WEBHOOK_URL` set, the lease holder registers the webhook instead of
polling, and any API process takes Telegram's posts (api/telegram_webhook.py); sending
stays with the lease holder.

Every API process runs a `Reach` (Web Push needs no configuration; Telegram joins with
`NOVABERG_TELEGRAM_TOKEN`); only the one holding the lease `kanal_leitung` drains the
channel outbox and, with a bot token, polls Telegram (two pollers would
fight over getUpdates, two senders would send twice). The lease lives 30 s and is extended
every 10 s; a holder that dies is replaced within a lease's life, and the successor first
moves the item its predecessor was sending back into the outbox. The API process, not the
worker, because messages from Telegram enter through the API's intake (rate limits and
all), and because `novaberg serve` (one process) and a scaled-out installation
(`novaberg api` ×N + `novaberg worker` ×M) then work the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from telegram import Bot
from telegram.error import TelegramError

from novaberg.reach.channels import Channel
from novaberg.reach.outbox import Outbox
from novaberg.reach.sender import ChannelSender
from novaberg.reach.telegram import TelegramChannel, make_bot
from novaberg.reach.telegram_poll import Accept, TelegramPoller
from novaberg.store import keys
from novaberg.store.channel_links import sync_channel_users
from novaberg.store.lease import Leases

log = logging.getLogger(__name__)

SEND_WAIT = 1

WEBHOOK_PATH = "/telegram/webhook"
"""Where Telegram posts updates when `NOVABERG_TELEGRAM_WEBHOOK_URL` is set."""


def webhook_secret(token: str) -> str:
    """The `secret_token` Telegram sends with every webhook call: derived from the bot token,
    so every API process knows it and nobody without the token can forge an update."""
    return hashlib.sha256(f"novaberg-telegram-webhook:{token}".encode()).hexdigest()


"""Seconds one look into the outbox blocks (also how soon due retries are released)."""


class Reach:
    def __init__(
        self,
        redis: aioredis.Redis,
        pool: AsyncConnectionPool,
        accept: Accept,
        *,
        token: str | None,
        api_url: str,
        default_character: str,
        poll_timeout: int = 30,
        webhook_url: str | None = None,
        lease_seconds: float = keys.CHANNEL_LEAD_TTL,
        base_delay: float | None = None,
        bot: Bot | None = None,
        push: Channel | None = None,
    ) -> None:
        """`token` None: no Telegram (no polling, no bot); the sender still runs for the
        other channels (`push`)."""
        self.redis = redis
        self.pool = pool
        self.lease_seconds = lease_seconds
        self.webhook_url = webhook_url.rstrip("/") + WEBHOOK_PATH if webhook_url and token else None
        self.webhook_secret = webhook_secret(token or "")
        channels: dict[str, Channel] = {}
        self.bot: Bot | None = None
        self.poller: TelegramPoller | None = None
        if token:
            self.bot = bot or make_bot(token, api_url, poll_timeout=poll_timeout)
            self.poller = TelegramPoller(
                self.bot,
                redis,
                pool,
                accept,
                default_character=default_character,
                poll_timeout=poll_timeout,
            )
            telegram = TelegramChannel(self.bot)
            channels[telegram.kind] = telegram
        if push is not None:
            channels[push.kind] = push
        self.sender = ChannelSender(redis, pool, channels)
        if base_delay is not None:
            self.sender.base_delay = base_delay
        self.leases = Leases(redis)
        self.leading = False
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="reach")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.bot is not None:
            with contextlib.suppress(Exception):
                await self.bot.shutdown()

    async def _run(self) -> None:
        while True:
            try:
                token = await self.leases.take(keys.channel_lead(), self.lease_seconds)
            except Exception as exc:
                log.warning("channel lease not taken (%s)", exc)
                token = None
            if token is None:
                await asyncio.sleep(self.lease_seconds / 3)
                continue
            try:
                await self._lead(token)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("leading the channels failed; trying again")
                await asyncio.sleep(1.0)
            finally:
                self.leading = False
                with contextlib.suppress(Exception):
                    await self.leases.release(keys.channel_lead(), token)

    async def _lead(self, token: str) -> None:
        self.leading = True
        users = await sync_channel_users(self.pool, self.redis)
        recovered = await Outbox(self.redis).recover()
        log.info(
            "leading the channels: %d user(s) linked, %d outcome(s) recovered", users, recovered
        )
        if self.bot is not None:
            await self._prepare_telegram(self.bot)
        tasks = [
            asyncio.create_task(self._keep(token), name="reach-lease"),
            asyncio.create_task(self._send(), name="reach-send"),
        ]
        if self.poller is not None and not self.webhook_url:
            poll = self.poller.run(lambda: self.leading)
            tasks.append(asyncio.create_task(poll, name="reach-poll"))
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.leading = False
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _prepare_telegram(self, bot: Bot) -> None:
        try:
            await bot.initialize()
            if self.webhook_url:
                await bot.set_webhook(
                    self.webhook_url,
                    secret_token=self.webhook_secret,
                    allowed_updates=["message"],
                )
            else:
                await bot.delete_webhook()  # getUpdates answers 409 while one is set
        except TelegramError as exc:
            log.warning("telegram not ready (%s); polling retries", exc)

    async def _keep(self, token: str) -> None:
        """Extend the lease every third of its life; return (ending the lead) once lost."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                if not await self.leases.extend(keys.channel_lead(), token, self.lease_seconds):
                    log.warning("the channel lease was lost; another process leads now")
                    return
            except aioredis.RedisError as exc:
                log.warning("channel lease not extended: %s", exc)

    async def _send(self) -> None:
        while self.leading:
            try:
                await self.sender.step(SEND_WAIT)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("channel sender step failed")
                await asyncio.sleep(SEND_WAIT)
