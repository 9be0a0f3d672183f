"""Web Push as a channel: one subscription of one device is one link (`art = 'push'`,
`ziel` = the subscription's JSON as the browser gave it: endpoint and keys).

The notification carries who speaks (the character's name), a short preview and where to
open the page: `/?charakter=<id>#turn-<turn id>`, the conversation at that message (the
page's history marks each answer with its turn id; web/app.js scrolls to it). pywebpush signs the request
with the installation's VAPID key (reach/vapid.py) and encrypts the payload for the
subscription (RFC 8291, aes128gcm): the push service sees neither text nor name.

The push service's answers map onto the sender's failures: 404/410 (the subscription
expired or was revoked by the browser) and 401/403 (made under another key) are
permanent — the link is marked after that one try and never used again; 429 and 5xx and
network errors are transient (retried, bounded, by the sender); a 400/413 refuses this one
message.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final
from urllib.parse import quote

import aiohttp
from pywebpush import WebPushException, webpush_async

from novaberg.reach.channels import MessageRefused, PermanentFailure, TransientFailure
from novaberg.reach.routing import Outcome
from novaberg.reach.vapid import VapidKeys
from novaberg.store.channel_links import PUSH, ChannelLink

log = logging.getLogger(__name__)

PREVIEW_CHARS: Final = 140
"""Characters of the text a notification shows; the page has the whole message."""

TTL_SECONDS: Final = 24 * 3600
"""How long the push service keeps a notification for a device that is offline. Longer is
stale: the page shows the message anyway when opened."""

SEND_TIMEOUT: Final = 10.0

GONE: Final = frozenset({401, 403, 404, 410})
"""Answers after which the subscription is of no use (expired, revoked, other key)."""

Names = Callable[[str, str], Awaitable[str]]
"""(user_id, character_id) → the name the person knows the character by."""


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first `limit` characters, cut at a word where one is near, with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", 0, limit)
    if cut < limit // 2:
        cut = limit
    return flat[:cut].rstrip(" ,;:.") + " …"


def open_url(character_id: str, turn_id: str) -> str:
    """Where a click on the notification opens the page: that conversation, that message."""
    url = f"/?charakter={quote(character_id, safe='')}"
    return f"{url}#turn-{quote(turn_id, safe='')}" if turn_id else url


def payload(outcome: Outcome, seq: int, name: str) -> dict[str, Any]:
    """What the service worker (web/sw.js) gets: the wire names are German, like the rest."""
    return {
        "titel": name or outcome.character_id,
        "text": preview(outcome.text),
        "url": open_url(outcome.character_id, outcome.turn_id),
        "character_id": outcome.character_id,
        "seq": seq,
    }


def subscription(target: str) -> dict[str, Any]:
    """The stored subscription (endpoint + keys) as pywebpush takes it."""
    sub = json.loads(target)
    if not isinstance(sub, dict) or "endpoint" not in sub:
        raise PermanentFailure("stored subscription unreadable")
    return sub


class PushChannel:
    """Sends notifications to subscribed devices."""

    kind = PUSH

    def __init__(self, keys: VapidKeys, contact: str, names: Names) -> None:
        self.keys = keys
        self.contact = contact
        self.names = names

    async def send(self, link: ChannelLink, outcome: Outcome, seq: int) -> None:
        name = await self.names(link.user_id, outcome.character_id)
        body = json.dumps(payload(outcome, seq, name), ensure_ascii=False)
        await self.push(link.target, body)

    async def push(self, target: str, body: str) -> None:
        try:
            await webpush_async(
                subscription(target),
                body,
                vapid_private_key=self.keys.vapid,
                vapid_claims={"sub": self.contact},  # a fresh dict: pywebpush adds aud/exp
                ttl=TTL_SECONDS,
                timeout=SEND_TIMEOUT,
            )
        except WebPushException as exc:
            status = exc.status_code
            if status in GONE:
                raise PermanentFailure(f"{status} subscription gone") from exc
            if status == 429:
                raise TransientFailure("429", retry_after=_seconds(exc.retry_after)) from exc
            if status in (400, 413):
                raise MessageRefused(f"{status} {exc.message}"[:200]) from exc
            raise TransientFailure(f"{status} {exc.message}"[:200]) from exc
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise TransientFailure(f"{type(exc).__name__}: {exc}"[:200]) from exc


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: our own backoff decides
