"""A person's state in Redis, as JSON: the key families that hold what a pair *is* —
short-term memory, the session's recent turns and summary, Nova's state, stance,
situation, drive and momentum — and not what a pair is *doing* (queues, turn markers,
outcomes, impulse stacks, deliveries: transient, and wrong to replay on another server).

Values are written by type (string, hash, list, set, zset); a byte string that is not
UTF-8 (an embedding) becomes `{"base64": ...}`. A key's remaining lifetime travels as
`ttl_ms` and starts again when it is restored. Keys carry the user's hash tag
(`<family>:{<user>}:<character>…`, store/keys.py); an archive written before the tags
(`<family>:<user>:<character>…`) is restored under the tagged names all the same.
"""

from __future__ import annotations

import base64
from typing import Any, Final, cast

import redis.asyncio as aioredis

from novaberg.store.redis_client import is_cluster

PAIR_FAMILIES: Final = (
    "kzg",  # short-term memory entries  kzg:{<u>}:<c>:<ms>
    "kzg_index",  # the set of a pair's entries (members are entry keys)
    "kzg_index_version",
    "session",  # session:<u>:<c>:turns / :summary
    "nova_state",
    "haltung",
    "gv:detail",
    "gv:vorturn",
    "sachlage",
    "sachlage_verlauf",
    "drive:short_term",
    "momentum",
)
"""Key families `<family>:<user>:<character>[...]` that travel. Left out (transient):
prompt/event queues, turn markers, carried ids, parked events, kzg_umbettung (a
re-embedding marker), hash_dirty, angebot, shadow_stack*, impulse claims, deliveries."""


def _enc(value: Any) -> Any:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(value).decode("ascii")}


def _dec(value: Any) -> bytes:
    if isinstance(value, dict):
        return base64.b64decode(value["base64"])
    return str(value).encode("utf-8")


def raw_client(redis: aioredis.Redis) -> aioredis.Redis:
    """A client on the same server that returns bytes (embeddings are not text)."""
    if is_cluster(redis):
        from redis.asyncio.cluster import RedisCluster

        cluster: Any = redis
        node = cluster.startup_nodes[0]
        options = cluster.connection_kwargs
        return cast(
            aioredis.Redis,
            RedisCluster(
                host=node.host,
                port=node.port,
                username=options.get("username"),
                password=options.get("password"),
            ),
        )
    pool = redis.connection_pool
    kwargs = {**pool.connection_kwargs, "decode_responses": False}
    return aioredis.Redis(
        connection_pool=aioredis.ConnectionPool(connection_class=pool.connection_class, **kwargs)
    )


def _character_of(key: str, family: str, user_id: str) -> str:
    rest = key[len(family) + len(user_id) + 4 :]  # "<family>:{<user>}:"
    return rest.split(":", 1)[0]


async def export_keys(
    redis: aioredis.Redis, user_id: str, character_id: str | None
) -> list[dict[str, Any]]:
    """Every travelling key of the person (of one character, if named)."""
    raw = raw_client(redis)
    out: list[dict[str, Any]] = []
    try:
        for family in PAIR_FAMILIES:
            pattern = f"{family}:{{{user_id}}}:{character_id or '*'}"
            patterns = [pattern, pattern + ":*"] if character_id else [pattern]
            seen: set[bytes] = set()
            for match in patterns:
                async for key in raw.scan_iter(match=match, count=500):
                    if key in seen:
                        continue
                    seen.add(key)
                    item = await _read(raw, key)
                    if item is None:
                        continue
                    name = key.decode("utf-8")
                    item.update(family=family, character_id=_character_of(name, family, user_id))
                    out.append(item)
    finally:
        await raw.aclose()
    out.sort(key=lambda item: str(item["key"]))
    return out


async def _read(raw: Any, key: bytes) -> dict[str, Any] | None:
    kind = (await raw.type(key)).decode()
    value: Any
    if kind == "string":
        value = _enc(await raw.get(key) or b"")
    elif kind == "hash":
        pairs = [[_enc(k), _enc(v)] for k, v in (await raw.hgetall(key)).items()]
        # field names are text in every family; pairs keep a binary one all the same
        textual = all(isinstance(k, str) for k, _ in pairs)
        value = {k: v for k, v in pairs} if textual else pairs
    elif kind == "list":
        value = [_enc(v) for v in await raw.lrange(key, 0, -1)]
    elif kind == "set":
        value = sorted((_enc(v) for v in await raw.smembers(key)), key=str)
    elif kind == "zset":
        value = [[_enc(m), s] for m, s in await raw.zrange(key, 0, -1, withscores=True)]
    else:  # gone meanwhile ("none") or a type no family uses
        return None
    ttl = await raw.pttl(key)
    return {
        "key": key.decode("utf-8"),
        "type": kind,
        "ttl_ms": ttl if ttl > 0 else None,
        "value": value,
    }


def rename_user(text: str, old: str, new: str) -> str:
    """`<family>:{<old>}:…` (or the untagged `<family>:<old>:…` of an archive written
    before the hash tags), or a kzg key inside a value → the same, tagged, under `new`."""
    for family in sorted(PAIR_FAMILIES, key=len, reverse=True):
        for prefix in (f"{family}:{{{old}}}:", f"{family}:{old}:"):
            if text.startswith(prefix):
                return f"{family}:{{{new}}}:" + text[len(prefix) :]
    return text


def _renamed(value: Any, old: str, new: str) -> Any:
    return value if isinstance(value, dict) else rename_user(str(value), old, new)


async def restore_keys(
    redis: aioredis.Redis, items: list[dict[str, Any]], old_user: str, new_user: str
) -> tuple[int, int]:
    """Write the keys that do not exist yet; (written, already there)."""
    raw = raw_client(redis)
    written = present = 0
    try:
        for item in items:
            key = rename_user(str(item["key"]), old_user, new_user)
            if item["type"] == "set" and item["value"]:
                # an index set (kzg_index) may exist already for a pair used here before:
                # its entries are joined, not dropped (SADD of a member twice adds nothing)
                members = [_dec(_renamed(v, old_user, new_user)) for v in item["value"]]
                added = await raw.sadd(key, *members)
                written, present = (written + 1, present) if added else (written, present + 1)
                continue
            if await raw.exists(key):
                present += 1
                continue
            await _write(raw, key, item, old_user, new_user)
            written += 1
    finally:
        await raw.aclose()
    return written, present


async def _write(
    raw: aioredis.Redis, key: str, item: dict[str, Any], old_user: str, new_user: str
) -> None:
    kind, value = item["type"], item["value"]
    pipe = raw.pipeline(transaction=True)
    if kind == "string":
        pipe.set(key, _dec(value))
    elif kind == "hash":
        pairs = value.items() if isinstance(value, dict) else value
        pipe.hset(key, mapping={_dec(k): _dec(v) for k, v in pairs})
    elif kind == "list":
        pipe.rpush(key, *[_dec(v) for v in value])
    elif kind == "set":
        pipe.sadd(key, *[_dec(_renamed(v, old_user, new_user)) for v in value])
    elif kind == "zset":
        pipe.zadd(key, {_dec(m): float(s) for m, s in value})
    if item.get("ttl_ms"):
        pipe.pexpire(key, int(item["ttl_ms"]))
    await pipe.execute()
