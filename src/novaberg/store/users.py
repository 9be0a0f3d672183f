"""Users and their API tokens. A token is shown once and stored only as SHA-256.

The plain token never touches the database; lookups hash the presented token
and compare hashes, so a leaked table does not leak working credentials.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any

from psycopg_pool import AsyncConnectionPool

TOKEN_BYTES = 32
"""Entropy of a new API token (256 bit)."""

TOKEN_PREFIX = "nvb_"
"""Makes a Novaberg token recognisable in logs and secret scanners."""

USER_ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""User ids become parts of Redis keys (`prompt_queue:{u}:{c}`), so no ':' or spaces."""


class InvalidUserId(ValueError):
    pass


@dataclass(frozen=True)
class IssuedToken:
    user_id: str
    token: str
    label: str


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def check_user_id(user_id: str) -> str:
    if not USER_ID_PATTERN.fullmatch(user_id):
        raise InvalidUserId(
            f"invalid user id {user_id!r}: use 1-64 letters, digits, '_', '.' or '-'"
        )
    return user_id


async def ensure_user(pool: AsyncConnectionPool, user_id: str, display_name: str = "") -> bool:
    """Create the user if missing; return True if it was created now."""
    check_user_id(user_id)
    async with pool.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO users (user_id, display_name) VALUES (%s, %s) "
            "ON CONFLICT (user_id) DO NOTHING RETURNING user_id",
            (user_id, display_name or user_id),
        )
        return await cur.fetchone() is not None


async def issue_token(pool: AsyncConnectionPool, user_id: str, label: str = "") -> IssuedToken:
    """Create the user if needed and a new token for it; the plain token is returned once."""
    await ensure_user(pool, user_id)
    token = new_token()
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO api_tokens (token_hash, user_id, label) VALUES (%s, %s, %s)",
            (hash_token(token), user_id, label),
        )
    return IssuedToken(user_id, token, label)


async def register_token(
    pool: AsyncConnectionPool, user_id: str, token: str, label: str = ""
) -> None:
    """Store a token the caller already holds (e.g. the local page token kept on disk)."""
    await ensure_user(pool, user_id)
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO api_tokens (token_hash, user_id, label) VALUES (%s, %s, %s) "
            "ON CONFLICT (token_hash) DO NOTHING",
            (hash_token(token), user_id, label),
        )


async def user_for_token(pool: AsyncConnectionPool, token: str) -> str | None:
    """The user a token belongs to, or None for an unknown token."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT user_id FROM api_tokens WHERE token_hash = %s", (hash_token(token),)
        )
        row: Any = await cur.fetchone()
    return None if row is None else str(row["user_id"])


async def revoke_tokens(pool: AsyncConnectionPool, user_id: str, label: str | None = None) -> int:
    """Delete a user's tokens (all, or those with one label); return how many."""
    async with pool.connection() as conn:
        if label is None:
            cur = await conn.execute("DELETE FROM api_tokens WHERE user_id = %s", (user_id,))
        else:
            cur = await conn.execute(
                "DELETE FROM api_tokens WHERE user_id = %s AND label = %s", (user_id, label)
            )
        return cur.rowcount


async def list_users(pool: AsyncConnectionPool) -> list[dict[str, object]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT u.user_id, u.display_name, count(t.token_hash) AS tokens "
            "FROM users u LEFT JOIN api_tokens t ON t.user_id = u.user_id "
            "GROUP BY u.user_id, u.display_name ORDER BY u.user_id"
        )
        rows: list[Any] = await cur.fetchall()
        return [dict(r) for r in rows]
