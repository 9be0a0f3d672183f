"""Telegram as a channel: the Bot API through python-telegram-bot's `Bot`, pointed at
`NOVABERG_TELEGRAM_API_URL` (requests go to `{root}/bot{token}/{method}`, as the real API
and a self-hosted Bot API server expect). Only the `Bot` is used, not the library's
`Application`: polling and sending run under our own lease and loop (reach/lead.py)."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from telegram import Bot
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    RetryAfter,
    TelegramError,
)
from telegram.request import HTTPXRequest

from novaberg.reach.channels import MessageRefused, PermanentFailure, TransientFailure
from novaberg.reach.routing import Outcome, text_for
from novaberg.store.channel_links import TELEGRAM, ChannelLink

log = logging.getLogger(__name__)

MAX_TEXT = 4096
"""Characters Telegram takes in one message; a longer answer goes out in parts."""

GONE_CHAT = ("chat not found", "user is deactivated", "peer_id_invalid")
"""400 descriptions that mean the chat itself is gone (not just this message refused)."""


def make_bot(token: str, api_url: str, *, poll_timeout: int = 30) -> Bot:
    """A `Bot` for `{api_url}/bot{token}/…`. Its HTTP client allows one long poll and a few
    sends at once (the poller and the sender share it)."""
    root = api_url.rstrip("/")
    request = HTTPXRequest(connection_pool_size=4, read_timeout=10.0, connect_timeout=10.0)
    updates = HTTPXRequest(connection_pool_size=1, read_timeout=poll_timeout + 10.0)
    return Bot(
        token,
        base_url=root + "/bot{token}",
        base_file_url=root + "/file/bot{token}",
        request=request,
        get_updates_request=updates,
    )


def split_text(text: str, limit: int = MAX_TEXT) -> list[str]:
    """Parts of at most `limit` characters, cut at a line break or space where one is near."""
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = max(rest.rfind("\n", 0, limit), rest.rfind(" ", 0, limit))
        if cut < limit // 2:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        parts.append(rest)
    return parts


def _seconds(value: Any) -> float:
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


class TelegramChannel:
    """Sends texts to linked chats; maps the Bot API's errors to the sender's two kinds."""

    kind = TELEGRAM

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def send(self, link: ChannelLink, outcome: Outcome, seq: int) -> None:
        await self.send_text(link.target, text_for(outcome, link))

    async def send_text(self, target: str, text: str) -> None:
        try:
            for part in split_text(text):
                await self.bot.send_message(chat_id=int(target), text=part)
        except Forbidden as exc:  # 403: blocked by the user, kicked
            raise PermanentFailure(f"403 {exc.message}") from exc
        except ChatMigrated as exc:
            raise PermanentFailure(f"chat migrated to {exc.new_chat_id}") from exc
        except RetryAfter as exc:  # 429
            wait = _seconds(exc._retry_after)
            raise TransientFailure(f"429 retry after {wait:g} s", retry_after=wait) from exc
        except BadRequest as exc:  # 400
            if any(gone in exc.message.lower() for gone in GONE_CHAT):
                raise PermanentFailure(f"400 {exc.message}") from exc
            raise MessageRefused(f"400 {exc.message}") from exc
        except TelegramError as exc:  # network, 5xx, 401/404 (token): not the chat's fault
            raise TransientFailure(f"{type(exc).__name__}: {exc.message}") from exc
