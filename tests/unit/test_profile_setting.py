"""NOVABERG_PROFILE: compact on the bundled model, full on a server, an explicit value wins
(docs/behaviour/llm.md#profiles)."""

from __future__ import annotations

import pytest

from novaberg.agents.registry import AgentRegistry
from novaberg.config import Profile, load_settings
from novaberg.graph.base import Node
from novaberg.graph.character_graph import character_table
from novaberg.graph.nodes.tribunal import tribunal
from novaberg.graph.nodes.tribunal_panel import tribunal_panel


@pytest.fixture(autouse=True)
def _no_profile_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NOVABERG_PROFILE", "NOVABERG_LLM", "NOVABERG_LLM_URL", "NOVABERG_QUERY_REWRITE"):
        monkeypatch.delenv(name, raising=False)


def test_the_bundled_model_gets_the_compact_profile_and_a_server_the_full_one() -> None:
    assert load_settings().turn_profile is Profile.COMPACT
    assert load_settings(llm="local").turn_profile is Profile.COMPACT
    assert load_settings(llm_url="http://localhost:11434/v1").turn_profile is Profile.FULL
    assert load_settings(llm="scripted").turn_profile is Profile.FULL


def test_an_explicit_profile_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(profile="full").turn_profile is Profile.FULL
    assert load_settings(llm="openai", profile="compact").turn_profile is Profile.COMPACT
    monkeypatch.setenv("NOVABERG_PROFILE", "full")
    assert load_settings(llm="local").turn_profile is Profile.FULL


def test_the_query_rewrite_follows_the_profile_unless_set() -> None:
    assert load_settings(profile="full").query_rewrite_on is True
    assert load_settings(profile="compact").query_rewrite_on is False
    assert load_settings(profile="compact", query_rewrite=True).query_rewrite_on is True
    assert load_settings(profile="full", query_rewrite=False).query_rewrite_on is False


def test_an_unknown_profile_is_refused_naming_the_variable() -> None:
    with pytest.raises(ValueError, match="NOVABERG_PROFILE"):
        load_settings(profile="tiny")


def test_both_profiles_build_the_same_stages_and_only_the_tribunal_differs() -> None:
    full = {node.name: node for node in character_table(AgentRegistry(), Profile.FULL)}
    compact = {node.name: node for node in character_table(AgentRegistry(), Profile.COMPACT)}
    assert list(full) == list(compact)
    assert full["tribunal"].fn is tribunal
    assert compact["tribunal"].fn is tribunal_panel

    def function(node: Node) -> object:
        return getattr(node.fn, "func", node.fn)  # a partial's function

    differing = [name for name in full if function(full[name]) is not function(compact[name])]
    assert differing == ["tribunal"]
