"""The OpenAPI document is the truth: schemathesis (`--checks all`) drives `novaberg api` as
shipped, with a real token, from nothing but /openapi.json - every documented operation,
examples, boundaries, random and invalid data, stateful sequences, undocumented methods and
missing auth. Zero server errors and zero schema violations. The example count is bounded
so the run stays within about two minutes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from novaberg.store.users import issue_token, user_for_token

MAX_EXAMPLES = 15
"""Examples per operation and phase: enough to reach every status, bounded in time."""

RUN_SECONDS = 100

UPLOADS = """
# A file upload (a character card, a chat export) is schema-valid as any bytes, yet only an
# importable file is accepted: its refusal is a 422 naming why (tests/integration/memory/
# test_imports.py), or a 400/413 for one nested too deep or over a limit
# (test_import_limits.py). Every other check applies to these operations as to all others.
[[operations]]
include-path-regex = "^/(characters|import/chat)$"
include-method = "POST"
checks.positive_data_acceptance.expected-statuses = [
  "2xx", "400", "401", "404", "409", "413", "422", "429",
]
"""

MODEL = """
# The run's user is not the installation's operator: testing, applying or resetting the
# model connection is refused with the documented 403 nur_betreiber before any URL is
# called (so the run never makes the server send requests to generated addresses); the
# operator's side is tests/integration/events/test_model_connection.py. (A block's filters
# are alternatives — a method alone would take in every operation of that method — so
# these name only paths, and stand first.)
[[operations]]
include-path = "/page/model/test"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "429"]

[[operations]]
include-path = "/page/model"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "429"]
"""


NO_WORKER = """
# `novaberg api` runs no consumers and no worker runs beside it here, so the door answers a
# valid completion with its documented 503 kein_worker (nothing queued) instead of waiting
# for an answer no one would give (the door with a worker: test_openai_door.py).
[[operations]]
include-path = "/v1/chat/completions"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "404", "409", "429", "503"]
"""
"""Before UPLOADS (whose POST takes in the door): where several blocks match an operation, the
first one's value wins."""

CHAT = """
# A text over 16 KiB (the schema's maxLength) is refused with the documented 413
# text_zu_lang before it is parsed as a field: a rejection like the 4xx schemathesis expects.
[[operations]]
include-path = "/chat"
include-method = "POST"
checks.negative_data_rejection.expected-statuses = [
  "400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx",
]
"""

EDIT = """
# As POST /chat: a new text over 16 KiB is refused with the documented 413 text_zu_lang.
[[operations]]
include-path = "/turns/{character_id}/messages/{message_id}"
include-method = "PUT"
checks.negative_data_rejection.expected-statuses = [
  "400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx",
]
"""


LIBRARY = """
# Approving a folder is schema-valid for any path, yet only a folder within
# NOVABERG_LIBRARY_FOLDERS (here an empty folder of the test) is approved: the others are a
# documented 422 ordner_abgelehnt with the reason (tests/integration/events/test_library_api.py).
[[operations]]
include-path = "/library/roots"
include-method = "POST"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "404", "409", "422", "429"]
"""


CHARACTER_EDITOR = """
# The character editor's values are judged beyond their schema: a name of spaces, a text
# over 20 000 characters (422 feld_ungueltig), base64 that is no PNG/JPEG/WebP picture (422
# bild_ungueltig), a greeting number the character does not have (422
# begruessung_unbekannt) - tests/integration/events/test_character_editor.py and
# test_character_opening.py cover each refusal.
[[operations]]
include-path-regex = "^/(new-character|characters/[^/]+(/avatar|/opening)?)$"
include-method-regex = "^(POST|PUT|PATCH)$"
checks.positive_data_acceptance.expected-statuses = [
  "2xx", "401", "403", "404", "409", "413", "422", "429",
]
"""

TOKENS = """
# DELETE /tokens/{token_id} revokes the caller's own token at once; an id schemathesis picks
# (or takes from GET /tokens) would end the run's authentication half way. It revokes a
# spare token of the same user instead: 204 once, 404 after (test_revocation.py covers the
# rest of the operation).
[[operations]]
include-path = "/tokens/{token_id}"
include-method = "DELETE"
parameters = { "path.token_id" = %d }
"""


def _failures(output: str) -> str:
    """What broke and how to replay it (the run's failure section), then its summary: the
    section comes before pages of warnings, which a plain tail would show instead."""
    start, summary = output.find("FAILURES"), output.rfind("SUMMARY")
    if start < 0:
        return output[-6000:]
    return output[start : summary if summary > start else None][:8000] + "\n" + output[-1500:]


def _schemathesis() -> list[str]:
    return [str(Path(sys.executable).with_name("st"))]


async def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    api_process: Any, token, db: Any, tmp_path: Path
) -> None:
    # generous limits: the run sends hundreds of requests as one user in seconds
    offered = tmp_path / "bibliothek"  # never the real home: a generated "~" would index it
    offered.mkdir()
    url, out = api_process(
        NOVABERG_CHAT_RATE="1000",
        NOVABERG_CHAT_BURST="100000",
        NOVABERG_WRITE_RATE="0",
        NOVABERG_LIBRARY_FOLDERS=str(offered),
    )
    anna = await token("anna")
    spare = await issue_token(db, "anna", "ersatz")
    report = tmp_path / "schemathesis.txt"
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        MODEL
        + NO_WORKER
        + UPLOADS
        + CHAT
        + EDIT
        + LIBRARY
        + CHARACTER_EDITOR
        + TOKENS % spare.token_id
    )
    command = [
        *_schemathesis(),
        "--config-file",
        str(config),
        "run",
        f"{url}/openapi.json",
        "--checks",
        "all",
        # DELETE archives or deactivates (the row stays readable: GET /agents/notes/{id}
        # returns it with aktiv=false, by design), which this one check reads as a leak
        "--exclude-checks",
        "use_after_free",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        "14",
        "--workers",
        "1",
        "--header",
        f"Authorization: Bearer {anna}",
        "--request-timeout",
        "20",
        "--max-time",
        str(RUN_SECONDS),
        "--generation-codec",
        "utf-8",
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": ""}
    result = subprocess.run(  # in tmp_path: schemathesis keeps a cache in its directory
        command, capture_output=True, text=True, timeout=RUN_SECONDS + 120, env=env, cwd=tmp_path
    )
    report.write_text(result.stdout + result.stderr)
    server_log = out.read_text(errors="replace")
    first_trace = (
        server_log[server_log.find("Traceback") :][:3000] if "Traceback" in server_log else ""
    )
    found = _failures(result.stdout + result.stderr)
    assert result.returncode == 0, found + "\n--- server ---\n" + first_trace
    assert "Traceback" not in server_log, first_trace
    assert await user_for_token(db, anna) == "anna", "the run kept its own token throughout"
    assert await user_for_token(db, spare.token) is None, "DELETE /tokens/{id} was exercised"
