"""Replaying a turn's recorded prompts through the bundled model: what reusing a shared
prefix saves on the in-process llama.cpp backend.

Each prompt (the exact token ids `ChatTokenizer` counted) is evaluated with one generated
token, in the order the calls started, two ways over the same `Llama` (evaluating every
prompt whole needs no model to be known: it is all the prompt tokens):

- `previous`: llama-cpp-python's own reuse — a prompt skips the tokens it shares with the
  call just before (its KV state is still in the context);
- `ram_cache`: that, plus a `LlamaRAMCache` holding the states of earlier calls, so a
  prompt also resumes from an older call's head (what `llm/local.py` does when
  `NOVABERG_LOCAL_PREFIX_CACHE_MB` > 0); the cost of saving every state is included.

The modes alternate over the rounds, so the machine's load moves all of them alike.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODES = ("previous", "ram_cache")


def replay(
    model_path: Path,
    prompts: Sequence[Sequence[int]],
    *,
    context: int,
    threads: int,
    cache_bytes: int,
    rounds: int,
) -> dict[str, Any]:
    """Median seconds per mode for evaluating `prompts` in order, and the saving."""
    from llama_cpp import Llama, LlamaRAMCache

    model = Llama(model_path=str(model_path), n_ctx=context, n_threads=threads, verbose=False)
    usable = [list(p) for p in prompts if len(p) < context - 1]
    seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
    try:
        model.create_completion(prompt=usable[0][:16], max_tokens=1)  # first-use costs
        for _ in range(rounds):
            for mode in MODES:
                model.set_cache(
                    LlamaRAMCache(capacity_bytes=cache_bytes) if mode == "ram_cache" else None
                )
                model.reset()
                started = time.perf_counter()
                for tokens in usable:
                    model.create_completion(prompt=tokens, max_tokens=1, temperature=0.0)
                seconds[mode].append(time.perf_counter() - started)
    finally:
        model.set_cache(None)
        model.close()
    medians = {mode: statistics.median(values) for mode, values in seconds.items()}
    return {
        "calls": len(usable),
        "prompt_tokens": sum(len(p) for p in usable),
        "seconds": {mode: round(value, 2) for mode, value in medians.items()},
        "ram_cache_saved_pct": round(100 * (1 - medians["ram_cache"] / medians["previous"]), 1),
        "rounds": rounds,
    }
