"""The door's pure parts: which message of a request is new, and how a failed turn's
`grund` becomes an HTTP status."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from novaberg.api.openai_door import CompletionRequest, failure_code, failure_status


@pytest.mark.parametrize(
    ("reason", "code", "status"),
    [
        ("modell_timeout (nach responder)", "modell_timeout", 504),
        ("gate_timeout", "gate_timeout", 503),
        ("worker_ausgefallen (nach tribunal)", "worker_ausgefallen", 503),
        ("redis_nicht_erreichbar", "redis_nicht_erreichbar", 503),
        ("keine_antwort (nach responder)", "keine_antwort", 502),
        ("modell_nicht_erreichbar", "modell_nicht_erreichbar", 502),
        ("fehler_im_knoten: ValueError: kaputt", "fehler_im_knoten", 500),
        ("ereignis_ungueltig: payload.turn_id", "ereignis_ungueltig", 500),
        ("etwas_neues", "etwas_neues", 500),
    ],
)
def test_a_failed_turn_maps_to_its_status(reason: str, code: str, status: int) -> None:
    assert failure_code(reason) == code
    assert failure_status(reason) == status


def test_only_the_last_user_message_is_new() -> None:
    request = CompletionRequest.model_validate(
        {
            "model": "nova",
            "messages": [
                {"role": "system", "content": "Du bist eine Piratin."},
                {"role": "user", "content": "erste"},
                {"role": "assistant", "content": "Antwort", "tool_calls": []},
                {"role": "user", "content": [{"type": "text", "text": "zweite"}]},
                {"role": "assistant", "content": None},
            ],
            "temperature": 0.7,
        }
    )
    last = request.last_user_message()
    assert last is not None and last.text() == "zweite"
    assert request.stream is False


def test_a_request_without_a_user_message_is_refused() -> None:
    with pytest.raises(ValidationError, match="no message with role 'user'"):
        CompletionRequest.model_validate(
            {"model": "nova", "messages": [{"role": "system", "content": "nur System"}]}
        )
