"""Which `grund` a model failure gives a failed turn (the wire codes in the README)."""

from __future__ import annotations

import pytest

from novaberg.events.outcomes import reason_for
from novaberg.llm.errors import (
    GateTimeout,
    ModelContextExceeded,
    ModelOutputError,
    ModelRefused,
    ModelTimeout,
    ModelUnavailable,
    ModelUnreachable,
    StructuredOutputUnsupported,
)


@pytest.mark.parametrize(
    ("exc", "grund"),
    [
        (ModelUnreachable("connection refused"), "modell_nicht_erreichbar (nach reducer)"),
        (
            ModelRefused("404", status=404, server_message="not found"),
            "modell_nicht_erreichbar (nach reducer)",
        ),
        (StructuredOutputUnsupported("none honoured"), "modell_nicht_erreichbar (nach reducer)"),
        (ModelUnavailable("503 after retries"), "modell_nicht_erreichbar (nach reducer)"),
        (ModelContextExceeded("too long"), "modell_kontext_ueberschritten (nach reducer)"),
        (ModelTimeout("slow"), "modell_timeout (nach reducer)"),
        (ModelOutputError("bad", "{"), "modell_ausgabe_unlesbar (nach reducer)"),
        (GateTimeout("busy"), "gate_timeout (nach reducer)"),
        (KeyError("x"), "fehler_im_knoten: KeyError (nach reducer)"),
    ],
)
def test_each_failure_has_its_code(exc: BaseException, grund: str) -> None:
    assert reason_for(exc, "nach reducer") == grund
