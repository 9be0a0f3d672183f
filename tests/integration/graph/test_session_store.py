"""Session turns in Redis and the numbered view (spec pipeline §2)."""

from __future__ import annotations

import orjson

from novaberg.memory.session_view import numbered_view
from novaberg.pair import Pair
from novaberg.store import keys, session, session_lua

PAIR = Pair("meister", "nova")


async def test_append_and_read_with_ttl(redis) -> None:  # type: ignore[no-untyped-def]
    for i in range(3):
        await session.append_turn(redis, PAIR, {"rolle": "user", "inhalt": f"t{i}"})
    assert [t["inhalt"] for t in await session.read_turns(redis, PAIR)] == ["t0", "t1", "t2"]
    assert [t["inhalt"] for t in await session.read_turns(redis, PAIR, limit=2)] == ["t1", "t2"]
    ttl = await redis.ttl(keys.session_turns(PAIR))
    assert 0 < ttl <= keys.SESSION_TTL


async def test_unreadable_entry_is_skipped(redis) -> None:  # type: ignore[no-untyped-def]
    await redis.rpush(keys.session_turns(PAIR), "{kaputt")
    await session.append_turn(redis, PAIR, {"rolle": "user", "inhalt": "ok"})
    assert [t["inhalt"] for t in await session.read_turns(redis, PAIR)] == ["ok"]


def test_numbered_view_last_five_pairs_newest_highest() -> None:
    turns = []
    for i in range(7):
        turns.append({"rolle": "user", "inhalt": f"frage {i}", "emotion": "freude"})
        turns.append({"rolle": "assistant", "inhalt": f"antwort {i} " + "x" * 200})
    view = numbered_view(turns).splitlines()
    assert len(view) == 10
    assert view[0] == "[1] USER (freude): frage 2"
    assert view[-1].startswith("[10] NOVA: antwort 6 ")
    assert len(view[-1]) == len("[10] NOVA: ") + 100
    assert numbered_view([]) == ""


async def test_complete_turn_sets_late_fields_on_the_right_turn(redis) -> None:  # type: ignore[no-untyped-def]
    """The user turn of `t0` gets its late fields in place, wherever it is in the session;
    the assistant turn of the same id and every other turn stay as they were."""
    await session.append_turn(redis, PAIR, {"rolle": "user", "inhalt": "alt", "turn_id": "t0"})
    await session.append_turn(redis, PAIR, {"rolle": "assistant", "inhalt": "a", "turn_id": "t0"})
    for i in range(1, 12):  # push t0 beyond the window of newest turns read first
        await session.append_turn(
            redis, PAIR, {"rolle": "user", "inhalt": f"u{i}", "turn_id": f"t{i}"}
        )
    done = await session.complete_turn(
        redis, PAIR, "t0", "user", {"intentionen": ["x"], "kern": "k"}
    )
    assert done == {
        "rolle": "user",
        "inhalt": "alt",
        "turn_id": "t0",
        "intentionen": ["x"],
        "kern": "k",
    }
    turns = await session.read_turns(redis, PAIR)
    assert turns[0] == done and turns[1] == {"rolle": "assistant", "inhalt": "a", "turn_id": "t0"}
    assert [t["inhalt"] for t in turns[2:]] == [f"u{i}" for i in range(1, 12)]
    newest = await session.complete_turn(redis, PAIR, "t11", "user", {"kern": "neu"})
    assert newest is not None and (await session.read_turns(redis, PAIR))[-1]["kern"] == "neu"
    assert await session.complete_turn(redis, PAIR, "fehlt", "user", {"kern": "k"}) is None


async def test_complete_turn_counted_survives_a_trim_and_returns_the_length(redis) -> None:  # type: ignore[no-untyped-def]
    """A summary trim between finding the turn and setting it moves the turn: the set
    must not write over the turn now at that index; the turn is found again and completed,
    and the session's length after the write comes back (the summary step's LLEN)."""
    for i in range(4):
        await session.append_turn(
            redis, PAIR, {"rolle": "user", "inhalt": f"u{i}", "turn_id": f"t{i}"}
        )
    attempts: list[int] = []

    class TrimmingRedis:
        """The real client; before the first set, the summary trims the oldest turn."""

        def __init__(self, inner):  # type: ignore[no-untyped-def]
            self.inner = inner

        def register_script(self, text):  # type: ignore[no-untyped-def]
            script = self.inner.register_script(text)
            if text != session_lua.SWAP:
                return script

            async def call(keys, args):  # type: ignore[no-untyped-def]
                if not attempts:
                    await self.inner.ltrim(keys[0], 1, -1)
                attempts.append(int(args[0]))
                return await script(keys=keys, args=args)

            return call

    done, length = await session.complete_turn_counted(
        TrimmingRedis(redis), PAIR, "t2", "user", {"kern": "k"}
    )
    assert done is not None and done["kern"] == "k"
    assert attempts == [2, 1], "the first set saw the trimmed list, failed and found it again"
    turns = await session.read_turns(redis, PAIR)
    assert [t["inhalt"] for t in turns] == ["u1", "u2", "u3"]
    assert turns[1]["kern"] == "k" and "kern" not in turns[0] and "kern" not in turns[2]
    assert length == 3 == await redis.llen(keys.session_turns(PAIR))


async def _open_session(redis, append) -> None:  # type: ignore[no-untyped-def]
    """t0's user turn, its answer, then eleven turns: t0 is beyond the newest window."""
    await append(redis, PAIR, {"rolle": "user", "inhalt": "alt", "turn_id": "t0", "zeit": 0.1})
    await session.append_turn(redis, PAIR, {"rolle": "assistant", "inhalt": "a", "turn_id": "t0"})
    for i in range(1, 12):
        await append(redis, PAIR, {"rolle": "user", "inhalt": f"u{i}", "turn_id": f"t{i}"})


async def test_an_open_turn_is_completed_in_one_round_trip_as_a_read_one_is(
    redis,  # type: ignore[no-untyped-def]
    redis_trips: list[bytes],
) -> None:
    """A turn this process stored open is completed by one compare-and-set, with the same
    result and the same session as completing it after reading it."""
    late = {"intentionen": ["x"], "kern": "k"}
    key = keys.session_turns(PAIR)
    await _open_session(redis, session.append_turn)
    read_first = [
        await session.complete_turn_counted(redis, PAIR, t, "user", late) for t in ("t0", "t11")
    ]
    expected = await redis.lrange(key, 0, -1)
    await redis.delete(key)
    await _open_session(redis, session.append_open_turn)
    await session.complete_turn_counted(redis, PAIR, "t5", "user", late)  # loads the script
    await redis.lset(key, 6, expected[6])  # t5 as it was
    redis_trips.clear()
    remembered = [
        await session.complete_turn_counted(redis, PAIR, t, "user", late) for t in ("t0", "t11")
    ]
    assert len(redis_trips) == 2 and all(b"EVALSHA" in sent for sent in redis_trips)
    assert remembered == read_first
    assert await redis.lrange(key, 0, -1) == expected


async def test_an_open_turn_changed_since_it_was_stored_is_read_again(redis) -> None:  # type: ignore[no-untyped-def]
    """The stored item is not what this process appended (another writer set it): the
    turn is found by reading, as without the memory of it, and nothing is overwritten."""
    await _open_session(redis, session.append_open_turn)
    await session.complete_turn(redis, PAIR, "t0", "assistant", {"kern": "antwort"})
    key = keys.session_turns(PAIR)
    changed = {"rolle": "user", "inhalt": "anders", "turn_id": "t3"}
    await redis.lset(key, 4, orjson.dumps(changed))
    done = await session.complete_turn(redis, PAIR, "t3", "user", {"kern": "k"})
    assert done == {**changed, "kern": "k"}
    assert (await session.read_turns(redis, PAIR))[4] == done
    assert await session.complete_turn(redis, PAIR, "t2", "user", {"kern": "k"}) is not None
    await redis.lrem(key, 1, (await redis.lrange(key, 5, 5))[0])  # t4's item, gone
    assert await session.complete_turn(redis, PAIR, "t4", "user", {"kern": "k"}) is None


async def test_unreadable_entry_is_logged_at_every_read(redis, caplog) -> None:  # type: ignore[no-untyped-def]
    pair = Pair("kaputt", "nova")
    await redis.rpush(keys.session_turns(pair), "{kaputt", "[1, 2]")
    for _ in range(2):
        caplog.clear()
        assert await session.read_turns(redis, pair) == []
        assert [r.levelname for r in caplog.records] == ["ERROR", "ERROR"]
