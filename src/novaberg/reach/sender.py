"""The channel sender: hands each outcome in the outbox to the person's linked channels.

Exactly one process sends (the holder of the channel lease, reach/lead.py), one outbox
item at a time. For each item it reads the logged message (the log is the one copy of the
text), asks `routing.targets` which working links get it, and sends to each link not yet
marked sent for this message (`kanal_gesendet:{u}:{seq}:{link}`). So a message goes out
once per link even when the item is handled twice: after a transient failure of another
link, or after a sender died and the next one took the item over. (A sender that dies
between a channel's "ok" and writing the mark sends that one message again: at least once
in that crash, never lost.)

A permanent failure (bot blocked: 403) marks the link and it is never tried again; a
transient one (network, 5xx, 429) retries the item after `BASE_DELAY`·2ⁿ seconds (or what
the channel asked for), at most `MAX_ATTEMPTS` times, then the channel misses that message
(the page still has it in the log).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.events.delivery import Delivery
from novaberg.reach import origins as reach_origins
from novaberg.reach import routing
from novaberg.reach.channels import Channel, ChannelFailure, MessageRefused
from novaberg.reach.outbox import Item, Outbox
from novaberg.store import channel_links, channel_settings, keys

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 6
"""Tries of one outcome on a transiently failing channel (the first and five retries)."""

BASE_DELAY = 2.0
"""Seconds before the first retry; doubled each time."""

MAX_DELAY = 300.0
"""No retry waits longer than this, whatever the channel asked for."""


class ChannelSender:
    def __init__(
        self,
        redis: aioredis.Redis,
        pool: AsyncConnectionPool,
        channels: Mapping[str, Channel],
        *,
        clock: Callable[[], float] = time.time,
        base_delay: float = BASE_DELAY,
    ) -> None:
        self.redis = redis
        self.pool = pool
        self.channels = dict(channels)
        self.clock = clock
        self.base_delay = base_delay
        self.outbox = Outbox(redis)
        self.delivery = Delivery(redis)

    async def step(self, wait_seconds: int) -> bool:
        """Release due retries, then handle one item; False if none came in time."""
        await self.outbox.release_due(self.clock())
        raw = await self.outbox.take(wait_seconds)
        if raw is None:
            return False
        item = Item.decode(raw)
        if item is None:
            log.error("dropping an unreadable outbox item: %.200s", raw)
            await self.outbox.done(raw)
            return True
        retry_after = await self.handle(item)
        if retry_after is None:
            await self.outbox.done(raw)
        elif item.attempt + 1 >= MAX_ATTEMPTS:
            log.error(
                "outcome %d of %s not sent to every channel after %d tries; the page has it",
                item.seq,
                item.user_id,
                MAX_ATTEMPTS,
            )
            await self.outbox.done(raw)
        else:
            delay = retry_after or self.base_delay * 2**item.attempt
            await self.outbox.later(raw, item, self.clock() + min(delay, MAX_DELAY))
        return True

    async def handle(self, item: Item) -> float | None:
        """Send one outcome to its channels. None when nothing is left to retry, else the
        seconds a transiently failing channel asked to wait (0.0: it did not say)."""
        message = await self.delivery.logged(item.user_id, item.seq)
        outcome = routing.parse_outcome(message) if message is not None else None
        if outcome is None:
            if message is None:
                log.warning(
                    "outcome %d of %s left the log before it was sent", item.seq, item.user_id
                )
            return None
        links = await channel_links.of_user(self.pool, item.user_id)
        origins = await reach_origins.of(self.redis, outcome.message_ids)
        socket_open = bool(await self.redis.exists(keys.presence(item.user_id)))
        retry: float | None = None
        prefs = await channel_settings.read(self.pool, item.user_id)
        for link in routing.targets(
            links,
            socket_open=socket_open,
            origins=origins,
            wanted=lambda link: prefs.get(link.kind, {}).get(outcome.category, True),
        ):
            channel = self.channels.get(link.kind)
            sent = keys.channel_sent(item.user_id, item.seq, link.id)
            if channel is None or await self.redis.exists(sent):
                continue
            try:
                await channel.send(link, outcome, item.seq)
            except ChannelFailure as exc:
                if exc.permanent:
                    log.warning(
                        "%s link %d failed for good (%s); not used again",
                        link.kind,
                        link.id,
                        exc.reason,
                    )
                    await channel_links.mark_failed(self.pool, self.redis, link, exc.reason)
                    continue
                if isinstance(exc, MessageRefused):
                    log.error(
                        "%s link %d refused outcome %d: %s",
                        link.kind,
                        link.id,
                        item.seq,
                        exc.reason,
                    )
                    continue
                log.warning("%s link %d: %s; retried", link.kind, link.id, exc.reason)
                retry = max(retry or 0.0, exc.retry_after or 0.0)
                continue
            except Exception:
                log.exception("%s link %d: unexpected failure; retried", link.kind, link.id)
                retry = retry or 0.0
                continue
            await self.redis.set(sent, "1", ex=keys.CHANNEL_SENT_TTL)
            log.info(
                "outcome %d of %s sent to %s link %d", item.seq, item.user_id, link.kind, link.id
            )
        return retry
