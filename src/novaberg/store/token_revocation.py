"""Announcing revoked API tokens to every API process (docs/behaviour/events.md#revoked-tokens).

A token's row is deleted first; then its digest (the SHA-256 the server keys tokens by,
never the token) is published on `token_widerrufen`. Every API process drops it from its
token cache and closes the token's sockets when the message arrives, instead of trusting
its cache for up to 30 s more. A process that was not listening (its subscription was
lost) cannot know what it missed, so it forgets every cached token when it listens again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import redis.asyncio as aioredis

from novaberg.store import keys

DIGEST = re.compile(r"[0-9a-f]{64}")
"""A token digest as `store.users.hash_token` writes it."""


def encode(digests: Iterable[str]) -> str:
    """One message for a whole revocation: the digests, separated by spaces."""
    return " ".join(sorted(set(digests)))


def decode(message: str) -> list[str]:
    """The digests of a message; anything that is not a digest is ignored."""
    return [part for part in message.split() if DIGEST.fullmatch(part)]


async def announce(redis: aioredis.Redis, digests: Iterable[str]) -> int:
    """Publish revoked digests; returns how many subscribers (API processes) got them.
    Raises Redis's errors: the caller decides what an unannounced revocation means."""
    message = encode(digests)
    if not message:
        return 0
    return int(await redis.publish(keys.token_revoked_channel(), message))
