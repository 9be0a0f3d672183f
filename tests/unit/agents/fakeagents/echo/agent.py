"""A tiny agent for framework tests: asks when told "frag", fails on "kaputt"."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from novaberg.agents.base import AgentState, BaseAgent
from novaberg.agents.consent import Consent, interpret_consent


class EchoAgent(BaseAgent):
    router_intents = ("echo_management",)
    aliases = ("echo_alias",)

    @property
    def name(self) -> str:
        return "echo"

    def build_graph(self, deps: Any) -> Any:
        async def run(state: AgentState) -> dict[str, Any]:
            param = state["parameter"]
            text = state["task"]
            if "kaputt" in text:
                raise RuntimeError("boom")
            if param.get("resume"):
                if interpret_consent(param["user_answer"]) is Consent.APPROVE:
                    return {"status": "abgeschlossen", "result": "echo erledigt"}
                if param.get("always_ask"):
                    return {"status": "rueckfrage", "question": param["original_rueckfrage"]}
                return {"status": "dismissed", "result": "nichts"}
            if "frag" in text:
                return {
                    "status": "rueckfrage",
                    "question": "Wirklich?",
                    "parameter": {**param, "always_ask": "immer" in text},
                    "steps": [{"node": "run", "ergebnis": "frage"}],
                }
            if "quatsch" in text:
                return {"status": "rejected", "parameter": {**param, "grund": "kein_auftrag"}}
            return {"status": "abgeschlossen", "result": f"echo: {text}"}

        graph = StateGraph(AgentState)
        graph.add_node("run", run)
        graph.add_edge(START, "run")
        graph.add_edge("run", END)
        return graph.compile()
