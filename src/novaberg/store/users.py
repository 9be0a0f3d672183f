"""Users and their API tokens. A token is shown once and stored only as SHA-256.

The plain token never touches the database; lookups hash the presented token
and compare hashes, so a leaked table does not leak working credentials.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
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
    token_id: int


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
        cur = await conn.execute(
            "INSERT INTO api_tokens (token_hash, user_id, label) VALUES (%s, %s, %s) "
            "RETURNING token_id",
            (hash_token(token), user_id, label),
        )
        row: Any = await cur.fetchone()
    return IssuedToken(user_id, token, label, int(row["token_id"]))


async def user_for_token(pool: AsyncConnectionPool, token: str) -> str | None:
    """The user a token belongs to, or None for an unknown token."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT user_id FROM api_tokens WHERE token_hash = %s", (hash_token(token),)
        )
        row: Any = await cur.fetchone()
    return None if row is None else str(row["user_id"])


@dataclass(frozen=True)
class ApiToken:
    """One stored token, never its secret: `digest` is the SHA-256 the server keys it by
    (what a revocation announces), `token_id` the public id a person names it by."""

    token_id: int
    user_id: str
    label: str
    created_at: datetime
    digest: str


_TOKEN_COLUMNS = "token_id, user_id, label, erstellt_am, token_hash"


def _api_token(row: Any) -> ApiToken:
    return ApiToken(
        token_id=int(row["token_id"]),
        user_id=str(row["user_id"]),
        label=str(row["label"]),
        created_at=row["erstellt_am"],
        digest=str(row["token_hash"]),
    )


async def list_tokens(pool: AsyncConnectionPool, user_id: str) -> list[ApiToken]:
    """A user's tokens, oldest first."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {_TOKEN_COLUMNS} FROM api_tokens WHERE user_id = %s ORDER BY token_id",
            (user_id,),
        )
        rows: list[Any] = await cur.fetchall()
    return [_api_token(r) for r in rows]


async def live_digests(pool: AsyncConnectionPool, digests: Iterable[str]) -> set[str]:
    """Those of `digests` whose token still exists (a process that may have missed
    revocations checks its open sockets with this)."""
    wanted = list(set(digests))
    if not wanted:
        return set()
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT token_hash FROM api_tokens WHERE token_hash = ANY(%s)", (wanted,)
        )
        rows: list[Any] = await cur.fetchall()
    return {str(r["token_hash"]) for r in rows}


async def _delete_tokens(
    pool: AsyncConnectionPool, where: str, params: tuple[object, ...]
) -> list[ApiToken]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"DELETE FROM api_tokens WHERE {where} RETURNING {_TOKEN_COLUMNS}", params
        )
        rows = [_api_token(r) for r in await cur.fetchall()]
    return sorted(rows, key=lambda t: t.token_id)


async def revoke_token_id(pool: AsyncConnectionPool, user_id: str, token_id: int) -> list[ApiToken]:
    """Delete the user's token with this id; nothing for another user's id. The revoked
    tokens are returned so the caller can announce their digests (and say what went)."""
    return await _delete_tokens(pool, "token_id = %s AND user_id = %s", (token_id, user_id))


async def revoke_token(pool: AsyncConnectionPool, token: str) -> list[ApiToken]:
    """Delete the token its holder presents (whoever owns it)."""
    return await _delete_tokens(pool, "token_hash = %s", (hash_token(token),))


async def revoke_label(
    pool: AsyncConnectionPool, label: str, user_id: str | None = None
) -> list[ApiToken]:
    """Delete every token with this label: one user's, or every user's."""
    if user_id is None:
        return await _delete_tokens(pool, "label = %s", (label,))
    return await _delete_tokens(pool, "label = %s AND user_id = %s", (label, user_id))


async def revoke_all(pool: AsyncConnectionPool, user_id: str) -> list[ApiToken]:
    """Delete every token of a user (the user and their data stay)."""
    return await _delete_tokens(pool, "user_id = %s", (user_id,))


async def list_users(pool: AsyncConnectionPool) -> list[dict[str, object]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT u.user_id, u.display_name, count(t.token_hash) AS tokens "
            "FROM users u LEFT JOIN api_tokens t ON t.user_id = u.user_id "
            "GROUP BY u.user_id, u.display_name ORDER BY u.user_id"
        )
        rows: list[Any] = await cur.fetchall()
        return [dict(r) for r in rows]
