"""The structured-output forms: what each sends, when a probe answer counts as honoured,
the schema stated in a prompt, and which 5xx bodies are really request errors."""

from __future__ import annotations

import json

import pytest

from novaberg.config import StructuredForm
from novaberg.llm.http_json import is_request_validation_error
from novaberg.llm.structured_output import (
    PROBE_SCHEMA,
    SCHEMA_PROMPT,
    compact_schema,
    honours,
    response_format,
    with_schema_in_prompt,
)

SCHEMA = {
    "title": "Entry",
    "description": "A docstring for developers.",
    "type": "object",
    "properties": {
        "title": {"title": "Title", "type": "string", "description": "kurz, für das Modell"},
        "score": {"title": "Score", "type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["title", "score"],
}


def test_each_form_sends_its_own_response_format() -> None:
    assert response_format(StructuredForm.JSON_SCHEMA, SCHEMA, "Entry") == {
        "type": "json_schema",
        "json_schema": {"name": "Entry", "schema": SCHEMA, "strict": False},
    }
    assert response_format(StructuredForm.JSON_OBJECT_SCHEMA, SCHEMA, "Entry") == {
        "type": "json_object",
        "schema": SCHEMA,
    }
    assert response_format(StructuredForm.JSON_OBJECT, SCHEMA, "Entry") == {"type": "json_object"}
    assert response_format(StructuredForm.NONE, SCHEMA, "Entry") is None
    with pytest.raises(ValueError, match="probing"):
        response_format(StructuredForm.AUTO, SCHEMA, "Entry")


@pytest.mark.parametrize(
    ("form", "answer", "expected"),
    [
        (StructuredForm.JSON_SCHEMA, '{ "probe" : "novaberg"}', True),
        (StructuredForm.JSON_OBJECT_SCHEMA, '\n{"probe": "novaberg"}\n', True),
        (StructuredForm.JSON_SCHEMA, '{"probe": "hallo"}', False),  # JSON, schema ignored
        (StructuredForm.JSON_SCHEMA, '{"smol": {"name": "Shelby"}}', False),
        (StructuredForm.JSON_SCHEMA, "Hallo! Schön, dich zu sehen.", False),
        (StructuredForm.JSON_SCHEMA, '["novaberg"]', False),
        (StructuredForm.JSON_OBJECT, '{\n"smol": {\n"name": "Shel', True),  # cut off, but JSON
        (StructuredForm.JSON_OBJECT, "Hallo!", False),
    ],
)
def test_a_probe_answer_counts_only_if_it_obeys_the_form(
    form: StructuredForm, answer: str, expected: bool
) -> None:
    assert honours(form, answer) is expected


def test_the_probe_schema_allows_exactly_one_answer() -> None:
    assert PROBE_SCHEMA["properties"]["probe"]["enum"] == ["novaberg"]
    assert PROBE_SCHEMA["required"] == ["probe"]
    assert PROBE_SCHEMA["additionalProperties"] is False


def test_compact_schema_drops_titles_but_keeps_a_property_named_title() -> None:
    compact = compact_schema(SCHEMA)
    assert compact == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "kurz, für das Modell"},
            "score": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["title", "score"],
    }
    assert SCHEMA["properties"]["title"]["title"] == "Title", "the cached schema is untouched"


def test_the_schema_goes_to_the_end_of_the_last_user_message() -> None:
    messages = [
        {"role": "system", "content": "Du bist Nova."},
        {"role": "user", "content": "Bewerte das."},
        {"role": "assistant", "content": "{"},
    ]
    sent = with_schema_in_prompt(messages, SCHEMA)
    assert sent[0] == messages[0] and sent[2] == messages[2]
    head, stated = sent[1]["content"].split("\n\n", 1)
    assert head == "Bewerte das."
    assert stated.startswith(SCHEMA_PROMPT)
    assert json.loads(stated[len(SCHEMA_PROMPT) :]) == compact_schema(SCHEMA)
    assert messages[1]["content"] == "Bewerte das.", "the caller's messages are not changed"
    only_system = with_schema_in_prompt([{"role": "system", "content": "x"}], SCHEMA)
    assert only_system[-1]["role"] == "user" and only_system[-1]["content"].startswith(
        SCHEMA_PROMPT
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', "
            "'type'), 'msg': \"Input should be 'text' or 'json_object'\"}",
            True,
        ),
        ('[{"loc": ["body", "messages"], "msg": "field required"}]', True),
        ("overloaded", False),
        ("Llama model must be created with embedding=True to call this method", False),
        ("CUDA error: out of memory", False),
    ],
)
def test_which_server_errors_are_request_errors(body: str, expected: bool) -> None:
    assert is_request_validation_error(body) is expected
