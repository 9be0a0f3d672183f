"""The library-roots agent's nodes (docs/behaviour/agents.md#library-roots).

- classify: the request read from the words (request.py), no model call;
- check (approve): the folder the person may approve herself, checked without listing a
  folder she may not (`roots.person_folder`), then the question naming the real folder and
  its readable files — a yes/no question under the closed consent rule (agents/gate.py);
- resume: the answer read by that rule; only an approval goes on to execute;
- execute: the folder checked again (time passed), approved, verified, and its first index
  pass started in the background (memory/library/progress.py);
- revoke: at once, without asking — the safe direction; the index goes with it.

A refusal is a fault whose text is the person's sentence (sentences.py): the answer says
why, and nothing was opened.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from novaberg.agents.base import AgentState
from novaberg.agents.gate import GATE, read_gate_answer
from novaberg.agents.library_roots import sentences
from novaberg.agents.library_roots.request import APPROVE, REVOKE, folder_request
from novaberg.agents.receipts import receipt
from novaberg.agents.workflow import ask, fail, step
from novaberg.memory.library import roots
from novaberg.memory.library.indexer import LibraryLimits
from novaberg.memory.library.progress import PassBusy, start_pass
from novaberg.memory.library.roots import PersonPolicy, Refusal, RootRefused

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

CLASSIFY: Final = "klassifizieren"
CHECK: Final = "pruefen"
EXECUTE: Final = "ausfuehren"
REVOKE_NODE: Final = "widerrufen"

PATH: Final = "pfad"
FOLDER: Final = "ordner"
FILES: Final = "dateien"
"""Parameter keys: the path as said, the real folder asked about, its readable files."""


def _user(state: AgentState) -> str:
    return str((state.get("context") or {}).get("user_id") or "")


def _refused(node: str, exc: RootRefused, path: str, deps: GraphDeps) -> dict[str, Any]:
    """The fault whose text tells the person why, with the rule's code in the audit."""
    text = sentences.refusal(
        exc.reason,
        path,
        offered=PersonPolicy.of(deps.settings).allowed,
        limit=deps.settings.library_max_files,
    )
    return fail(node, text, grund=exc.reason.value)


async def _approved(deps: GraphDeps, user_id: str, path: str | Path) -> bool:
    """Whether `path` is an approved folder of the person (read back from the store)."""
    try:
        await roots.root_of(deps.pool, user_id, path)
    except RootRefused as exc:
        if exc.reason is Refusal.NOT_APPROVED:
            return False
        raise
    return True


def classify_node(state: AgentState) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    request = folder_request(state.get("task") or "")
    if request is None:
        return {
            "status": "rejected",
            "parameter": {**parameter, "grund": "kein_ordner"},
            "steps": step(CLASSIFY, "rejected", grund="kein_ordner"),
        }
    parameter.update(aktion=request.action, **{PATH: request.path})
    return {"parameter": parameter, "steps": step(CLASSIFY, request.action, pfad=request.path)}


def after_classify(state: AgentState) -> str:
    return "revoke" if (state.get("parameter") or {}).get("aktion") == REVOKE else "check"


async def _person_folder(path: str, deps: GraphDeps) -> tuple[Path, int]:
    """`roots.person_folder` off the event loop (it walks the folder to count)."""
    policy = PersonPolicy.of(deps.settings)
    return await asyncio.to_thread(
        roots.person_folder, path, policy, LibraryLimits.of(deps.settings)
    )


async def check_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    path = str(parameter[PATH])
    try:
        folder, count = await _person_folder(path, deps)
    except RootRefused as exc:
        return _refused(CHECK, exc, path, deps)
    if await _approved(deps, _user(state), folder):
        return {
            "status": "abgeschlossen",
            "result": sentences.already_approved(folder),
            "steps": step(CHECK, "schon_freigegeben", ordner=str(folder)),
        }
    parameter.update({FOLDER: str(folder), FILES: count, "frage_typ": GATE})
    return ask(CHECK, sentences.question(folder, count), parameter, ordner=str(folder))


def resume_node(state: AgentState) -> dict[str, Any]:
    """The answer to the question: an approval goes on to execute; a decline ends the run
    (`dismissed`), anything else asks the same question again."""
    _outcome, update = read_gate_answer(state)
    return update


async def execute_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    asked = Path(str(parameter[FOLDER]))
    user_id = _user(state)
    try:
        folder, count = await _person_folder(str(asked), deps)
        if folder != asked:
            return fail(EXECUTE, sentences.changed_meanwhile(asked), ordner=str(folder))
        root = await roots.approve(deps.pool, user_id, folder, by_person=True)
    except RootRefused as exc:
        return _refused(EXECUTE, exc, str(parameter.get(PATH) or asked), deps)
    if not await _approved(deps, user_id, folder):
        return fail(EXECUTE, "Die Freigabe ließ sich nach dem Speichern nicht bestätigen.")
    # The page's progress line shows this pass too; PassBusy: another pass reads it already.
    with contextlib.suppress(PassBusy):
        await start_pass(deps.pool, deps.redis, deps.model, root, LibraryLimits.of(deps.settings))
    return {
        "status": "abgeschlossen",
        "result": sentences.approved(folder, count),
        "parameter": parameter,
        "steps": step(
            EXECUTE,
            "freigegeben",
            wurzel=root.id,
            dateien=count,
            verifiziert=True,
            **receipt(APPROVE, f"Bibliothek: + {sentences.shown(folder)}"),
        ),
    }


async def revoke_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    path = str(parameter[PATH])
    user_id = _user(state)
    try:
        root = await roots.root_of(deps.pool, user_id, path)
        passages = await roots.revoke(deps.pool, user_id, path)
    except RootRefused as exc:
        return _refused(REVOKE_NODE, exc, path, deps)
    if await _approved(deps, user_id, root.path):
        return fail(REVOKE_NODE, "Die Rücknahme ließ sich nach dem Speichern nicht bestätigen.")
    return {
        "status": "abgeschlossen",
        "result": sentences.revoked(root.path, passages),
        "steps": step(
            REVOKE_NODE,
            "widerrufen",
            wurzel=root.id,
            abschnitte=passages,
            verifiziert=True,
            **receipt(REVOKE, f"Bibliothek: − {sentences.shown(root.path)}"),
        ),
    }
