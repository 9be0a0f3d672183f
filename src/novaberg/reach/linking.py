"""One-time link codes: `novaberg telegram link --user U` makes one, the person sends it to
the bot as `/start CODE`, and the chat is theirs. A code lives 15 minutes and works once
(GETDEL); it is random enough (40 bits) that guessing one in that time is hopeless."""

from __future__ import annotations

import secrets

import redis.asyncio as aioredis

from novaberg.store import keys

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O, 1/I: a code is read off a screen and typed on a phone."""

CODE_LENGTH = 8


async def new_code(redis: aioredis.Redis, user_id: str) -> str:
    code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
    await redis.set(keys.link_code(code), user_id, ex=keys.LINK_CODE_TTL)
    return code


async def redeem(redis: aioredis.Redis, code: str) -> str | None:
    """The user the code links to, or None (unknown, used or expired). Works once."""
    cleaned = code.strip().upper()
    if not cleaned or len(cleaned) > 32:
        return None
    user = await redis.getdel(keys.link_code(cleaned))
    return None if user is None else str(user)
