"""The router hands a person's folder request to the library-roots agent without a model
call, as the turn's one task; Nova's own thought and a plain message go to the model."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from novaberg.agents.library_roots import NAME
from novaberg.agents.registry import discover_agents
from novaberg.graph.nodes.router import RouterDecision, router

REGISTRY = discover_agents()
REQUEST = "Du darfst meinen Ordner ~/Notizen lesen"


class CountingModel:
    """The router's model: counts its calls and routes to nothing."""

    def __init__(self) -> None:
        self.calls = 0

    async def structured(self, *_args: Any, **_kwargs: Any) -> RouterDecision:
        self.calls += 1
        return RouterDecision()


def state(origin: str, **text: str) -> dict[str, Any]:
    return {
        "event_payload": {"reiz_herkunft": origin},
        "turn_context": SimpleNamespace(open_offer=None, pending_question=None),
        **text,
    }


async def test_a_folder_request_is_routed_without_a_model_call() -> None:
    model = CountingModel()
    update = await router(
        state("nutzer_turn", user_prompt=REQUEST), SimpleNamespace(model=model), REGISTRY
    )  # type: ignore[arg-type]
    assert model.calls == 0
    assert (update["management_action"], update["management_target"]) == ("agent", NAME)
    assert update["management_tasks"] == [{"target": NAME, "text": REQUEST}]
    assert update["_log"] == {"weg": "ordner", "agent": NAME, "aktion": "freigeben"}


async def test_nova_s_own_thought_and_a_plain_message_go_to_the_model() -> None:
    model = CountingModel()
    settings = SimpleNamespace(timezone="Europe/Berlin")  # the turn head shows the day
    deps = SimpleNamespace(model=model, settings=settings, clock=lambda: 0.0)
    thought = await router(state("eigener_impuls", own_thought=REQUEST), deps, REGISTRY)  # type: ignore[arg-type]
    plain = await router(state("nutzer_turn", user_prompt="Wie war dein Tag?"), deps, REGISTRY)  # type: ignore[arg-type]
    assert model.calls == 2
    assert thought["management_action"] == plain["management_action"] == ""
