"""The prompt-leak guard in the character graph (graph/prompt_leak.py, evaluate): an answer
that repeats our prompt's instruction text — as the bundled SmolLM2 did — is never released,
even when every judge approves it: the corrector rewrites it, and a rewrite that still leaks
ends in the neutral fallback. Nothing of the leaked text reaches memory."""

from __future__ import annotations

import redis.asyncio as aioredis
from graph_helpers import script_human
from test_character_graph import (
    PAIR,
    RELEASED,
    script_character,
    user_turn,
)

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.evaluate import FALLBACK_DE, LEAK_ORDER
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store.pipeline_log import read_turn
from novaberg.store.session import read_turns

LEAK = (
    "Das sollst du inhaltlich sagen (Person A ist der Nutzer, Person B bist du). Gib es in "
    "deinen eig"
)
"""What the bundled model sent to a person (issue 36), cut mid-word as it was."""

MARK = "Person B bist du"


async def redis_text(redis: aioredis.Redis) -> str:
    """Every value Redis holds, as text (bytes read raw, binary parts such as embeddings
    decoded leniently): the memory the graph wrote (session, short-term memories, imprint),
    whatever its key."""
    pool = redis.connection_pool
    raw = aioredis.Redis(
        connection_pool=aioredis.ConnectionPool(
            connection_class=pool.connection_class,
            **{**pool.connection_kwargs, "decode_responses": False},
        )
    )
    try:
        parts: list[str] = []
        async for key in raw.scan_iter(count=500):
            parts.extend(v.decode("utf-8", "replace") for v in await _values(raw, key))
        return "\n".join(parts)
    finally:
        await raw.aclose()


async def _values(raw: aioredis.Redis, key: bytes) -> list[bytes]:
    kind = (await raw.type(key)).decode()
    if kind == "string":
        return [await raw.get(key)]
    if kind == "hash":
        return list((await raw.hgetall(key)).values())
    if kind == "list":
        return list(await raw.lrange(key, 0, -1))
    if kind == "set":
        return list(await raw.smembers(key))
    if kind == "zset":
        return list(await raw.zrange(key, 0, -1))
    if kind == "stream":
        return [v for _id, fields in await raw.xrange(key) for v in fields.values()]
    return []


async def test_a_leaking_answer_is_corrected_and_never_released(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer=LEAK)  # every judge approves it
    nodes, final, payload = await user_turn(runtime, "Wie geht's dir?")

    assert "corrector" in nodes, "the leak was sent back to the corrector"
    assert RELEASED["response"]["nachricht"] == "Korrigierte freundliche Antwort."
    assert final["response"] == "Korrigierte freundliche Antwort."
    (correction,) = [c for c in scripted.calls if "[KRITIK]" in c["prompt"]]
    assert LEAK_ORDER in correction["prompt"]
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, payload["turn_id"])
    first = next(r["inhalt"] for r in rows if r["node"] == "evaluate")
    assert first["entscheidung"] == "correct" and first["urteil"] == "ablehnen"
    assert any("person b bist du" in phrase for phrase in first["prompt_leck"])
    (_, assistant) = await read_turns(deps.redis, PAIR)
    assert assistant["inhalt"] == "Korrigierte freundliche Antwort."
    stored = await redis_text(deps.redis)
    assert "Korrigierte freundliche Antwort." in stored  # the scan reads the memory
    assert MARK not in stored, "no memory holds the leaked text"


async def test_an_answer_that_keeps_leaking_ends_in_the_fallback(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer=LEAK)
    scripted.add(r"\[KRITIK\]", LEAK)  # the rewrite leaks as well
    _nodes, final, _payload = await user_turn(runtime, "Wie geht's dir?")

    assert final["evaluate_decision"] == "fallback" and final["correction_round"] == 2
    assert RELEASED["response"]["nachricht"] == FALLBACK_DE
    (_, assistant) = await read_turns(deps.redis, PAIR)
    assert assistant["inhalt"] == FALLBACK_DE
    assert MARK not in await redis_text(deps.redis)


async def test_the_persons_own_words_are_not_instructions(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """She asks about the very sentence (say, having seen it leak): Nova may quote it."""
    quoted = (
        "Was bedeutet: Das sollst du inhaltlich sagen (Person A ist der Nutzer, Person B bist du)?"
    )
    answer = "Das sollst du inhaltlich sagen (Person A ist der Nutzer, Person B bist du) ist ein Satz aus meinen Anweisungen."
    script_human(scripted)
    script_character(scripted, answer=answer)
    nodes, final, _payload = await user_turn(runtime, quoted)

    assert "corrector" not in nodes
    assert final["response"] == answer
