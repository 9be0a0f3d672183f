"""Build the `ModelLayer` the settings ask for. Heavy backends are imported lazily."""

from __future__ import annotations

from novaberg.config import EmbedBackend, LLMBackend, Settings
from novaberg.llm.base import TextBackend
from novaberg.llm.layer import Embedder, ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM, load_rules


def build_text_backend(settings: Settings) -> TextBackend:
    backend = settings.llm_backend
    if backend is LLMBackend.SCRIPTED:
        rules = load_rules(settings.script) if settings.script else []
        return ScriptedLLM(rules)
    if backend is LLMBackend.OPENAI:
        from novaberg.llm.openai_compat import OpenAICompatLLM

        return OpenAICompatLLM(settings)
    from novaberg.llm.local import LocalLLM

    return LocalLLM(settings)


def build_embedder(settings: Settings) -> Embedder:
    backend = settings.embed_backend
    if backend is EmbedBackend.SCRIPTED:
        return ScriptedEmbedder(settings.embed_dim)
    if backend is EmbedBackend.OPENAI:
        from novaberg.llm.embeddings import RemoteEmbedder

        return RemoteEmbedder(settings)
    from novaberg.llm.embeddings import LocalEmbedder

    return LocalEmbedder(settings)


def build_model_layer(settings: Settings) -> ModelLayer:
    return ModelLayer(build_text_backend(settings), build_embedder(settings))


def check_backend_settings(settings: Settings) -> None:
    """The rules that tie several variables together (a remote backend needs its URL, the
    bundled embedder its dimension), checked before anything starts: SettingsError."""
    if settings.llm_backend is LLMBackend.OPENAI:
        from novaberg.llm import openai_compat

        openai_compat.check_settings(settings)
    from novaberg.llm import embeddings

    if settings.embed_backend is EmbedBackend.OPENAI:
        embeddings.check_remote_settings(settings)
    elif settings.embed_backend is EmbedBackend.LOCAL:
        embeddings.check_local_settings(settings)
