"""bench/scale.py counts Redis commands by name from `INFO commandstats` deltas: the
counting must see exactly the commands sent, none of the bench's own, and split a
turn phase into polling sweeps and the turns' own work."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import redis

from novaberg.runtime.services import Endpoints

ROOT = Path(__file__).resolve().parents[2]


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_commandstats", ROOT / "bench" / "_commandstats.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_delta_counts_each_command_sent_and_none_of_the_bench(endpoints: Endpoints) -> None:
    stats = load()
    client = redis.Redis.from_url(endpoints.redis_url, decode_responses=True)
    try:
        before = stats.snapshot(client)
        for _ in range(3):
            client.smembers("bench-test:active")
        pipe = client.pipeline(transaction=False)
        pipe.set("bench-test:a", "1")
        pipe.get("bench-test:a")
        pipe.get("bench-test:a")
        pipe.execute()
        client.eval("return redis.call('LLEN', KEYS[1])", 1, "bench-test:list")
        list(client.scan_iter(match="bench-test:*"))
        spent = stats.delta(before, stats.snapshot(client))
    finally:
        client.delete("bench-test:a")
        client.close()
    assert spent == Counter({"smembers": 3, "get": 2, "set": 1, "eval": 1, "llen": 1})


def test_split_polling_takes_the_most_polling_the_counts_allow() -> None:
    stats = load()
    idle = Counter({"smembers": 10, "evalsha": 90})  # one window: 100 commands
    # 4 windows' worth would need 40 SMEMBERS: the turns sent 30, so at most 3 (300).
    turn = Counter({"smembers": 30, "evalsha": 400, "get": 20})
    assert stats.split_polling(turn, idle) == (300.0, 150.0)
    assert stats.split_polling(turn, Counter()) == (0.0, 450.0)
    assert stats.split_polling(Counter({"get": 5}), idle) == (0.0, 5.0)
