"""The library's HTTP API through the real app (uvicorn), Redis and PostgreSQL, with the
scripted model's embedder: a person approves a temporary folder, watches the background
pass's progress until it ends with the counts, finds a PDF-only fact in the one memory
search, opens the passage with its neighbours, and revokes the folder. Another person gets
404 for all of it; refusals are one-line 422s, never a 500."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import WAIT

from library_files import PDF_FACT, make_docx, make_pdf
from novaberg.config import Settings
from novaberg.store import keys
from novaberg.store.library_progress import PROGRESS_RUNNING, Progress, write_progress


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    """The session's settings, with the test's folder as what a person may approve."""
    offered = tmp_path / "offen"
    offered.mkdir()
    return settings.model_copy(update={"library_folders": str(offered)})


@pytest.fixture
def folder(settings: Settings) -> Path:
    notes = Path(settings.library_folders) / "Notizen"
    notes.mkdir()
    (notes / "garten.md").write_text("# Garten\n\nDie Tomaten kommen im Mai ins Beet.\n")
    (notes / "vertrag.pdf").write_bytes(
        make_pdf(["Mietvertrag fuer die Wohnung in der Lindenstrasse.", "Paragraph 9\n" + PDF_FACT])
    )
    (notes / "rezept.docx").write_bytes(
        make_docx("Apfelkuchen", ["Sechs Aepfel schaelen.", "Eine Stunde backen."])
    )
    return notes


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def until_done(http: httpx.AsyncClient, token: str, root_id: int) -> dict[str, Any]:
    """Poll the roots until the pass over `root_id` has ended (within WAIT seconds)."""
    seen: list[Any] = []
    for _ in range(int(WAIT / 0.05)):
        roots = (await http.get("/library/roots", headers=auth(token))).json()["wurzeln"]
        root = next(r for r in roots if r["id"] == root_id)
        seen.append(root["fortschritt"])
        if root["fortschritt"] and root["fortschritt"]["zustand"] != PROGRESS_RUNNING:
            return root
        await asyncio.sleep(0.05)
    raise AssertionError(f"the pass did not end within {WAIT} s: {seen[-3:]}")


async def test_approve_watch_search_open_and_revoke(
    http: httpx.AsyncClient, token: Any, folder: Path
) -> None:
    anna, bob = await token("anna"), await token("bob")

    made = await http.post("/library/roots", json={"pfad": str(folder)}, headers=auth(anna))
    assert made.status_code == 201, made.text
    root = made.json()
    assert root["pfad"] == str(folder.resolve())
    assert root["fortschritt"]["zustand"] in ("laeuft", "fertig"), "the pass started at once"

    done = await until_done(http, anna, root["id"])
    print("root after its pass:", done)
    assert done["fortschritt"] == {"zustand": "fertig", "erledigt": 3, "gesamt": 3, "meldung": ""}
    assert (done["dateien"], done["fehler"], done["uebersprungen"]) == (3, 0, 0)
    assert done["abschnitte"] >= 4  # garten 1, vertrag 2 pages, rezept 1

    found = await http.get(
        "/memory/nova/search",
        params={"q": "Kuendigungsfrist Wohnung", "limit": 5},
        headers=auth(anna),
    )
    hit = next(h for h in found.json()["hits"] if h["layer"] == "library")
    assert hit["sources"][0]["file"].endswith("vertrag.pdf") and hit["sources"][0]["page"] == 2

    opened = await http.get(f"/library/passages/{hit['id']}", headers=auth(anna))
    assert opened.status_code == 200, opened.text
    passage = opened.json()
    print("opened passage:", passage)
    assert passage["label"] == "vertrag.pdf, S. 2, Z. 1–2"
    assert PDF_FACT in passage["text"] and passage["datei"] == str(folder / "vertrag.pdf")
    assert (passage["seite"], passage["zeilen"], passage["wurzel_id"]) == (2, [1, 2], root["id"])
    assert [p["seite"] for p in passage["vorher"]] == [1], "page 1 of the same file before it"
    assert "Lindenstrasse" in passage["vorher"][0]["text"] and passage["nachher"] == []

    # another person: every id of anna's is as unknown as one that does not exist
    assert (await http.get("/library/roots", headers=auth(bob))).json() == {"wurzeln": []}
    for method, path in (
        ("GET", f"/library/passages/{hit['id']}"),
        ("DELETE", f"/library/roots/{root['id']}"),
        ("POST", f"/library/roots/{root['id']}/reindex"),
    ):
        answer = await http.request(method, path, headers=auth(bob))
        assert answer.status_code == 404, (method, path, answer.text)
        assert answer.json()["detail"]["fehler"] == "nicht_gefunden"
    assert (await http.get(f"/library/passages/{hit['id']}", headers=auth(anna))).status_code == 200

    revoked = await http.delete(f"/library/roots/{root['id']}", headers=auth(anna))
    assert revoked.status_code == 200, revoked.text
    assert revoked.json() == {
        "id": root["id"],
        "pfad": root["pfad"],
        "abschnitte_geloescht": done["abschnitte"],
    }
    assert (await http.get("/library/roots", headers=auth(anna))).json() == {"wurzeln": []}
    gone = await http.get(f"/library/passages/{hit['id']}", headers=auth(anna))
    assert gone.status_code == 404
    again = await http.get(
        "/memory/nova/search", params={"q": "Kuendigungsfrist Wohnung"}, headers=auth(anna)
    )
    assert [h for h in again.json()["hits"] if h["layer"] == "library"] == []


async def test_refusals_are_one_line_and_never_a_server_error(
    http: httpx.AsyncClient, token: Any, folder: Path, settings: Settings, tmp_path: Path
) -> None:
    anna, bob = await token("anna"), await token("bob")
    (folder / "datei.txt").write_text("kein Ordner")
    outside = tmp_path / "draussen"
    outside.mkdir()
    (Path(settings.library_folders) / "abkuerzung").symlink_to(outside)
    cases = {
        str(folder / "fehlt"): "no such folder",
        str(folder / "datei.txt"): "not a directory",
        "Notizen": "full path",
        str(outside): "only folders below",
        str(Path(settings.library_folders) / "abkuerzung"): "only folders below",
        "/proc": "only folders below",
        "~niemand_hier_xyz/Notizen": "no such folder",
        str(Path(settings.library_folders) / ".." / "draussen"): "only folders below",
    }
    for path, reason in cases.items():
        answer = await http.post("/library/roots", json={"pfad": path}, headers=auth(anna))
        assert answer.status_code == 422, (path, answer.text)
        detail = answer.json()["detail"]
        assert detail["fehler"] == "ordner_abgelehnt" and reason in detail["detail"], detail
        assert "\n" not in detail["detail"]
    # overlapping: her own folder's subfolder, and a folder another person approved
    (folder / "Unterordner").mkdir()
    first = await http.post("/library/roots", json={"pfad": str(folder)}, headers=auth(anna))
    assert first.status_code == 201
    await until_done(http, anna, first.json()["id"])
    inner = await http.post(
        "/library/roots", json={"pfad": str(folder / "Unterordner")}, headers=auth(anna)
    )
    assert inner.status_code == 422 and "overlaps" in inner.json()["detail"]["detail"]
    theirs = await http.post("/library/roots", json={"pfad": str(folder)}, headers=auth(bob))
    assert theirs.status_code == 422
    assert "another person's" in theirs.json()["detail"]["detail"]


async def test_reindex_reads_a_new_file_and_a_running_pass_is_said(
    http: httpx.AsyncClient, token: Any, folder: Path, redis: aioredis.Redis
) -> None:
    anna = await token("anna")
    root = (
        await http.post("/library/roots", json={"pfad": str(folder)}, headers=auth(anna))
    ).json()
    before = await until_done(http, anna, root["id"])
    (folder / "neu.md").write_text("# Neu\n\nDer Schluessel liegt unter dem Blumentopf.\n")

    again = await http.post(f"/library/roots/{root['id']}/reindex", headers=auth(anna))
    assert again.status_code == 202, again.text
    after = await until_done(http, anna, root["id"])
    assert after["dateien"] == before["dateien"] + 1
    assert after["fortschritt"]["erledigt"] == after["fortschritt"]["gesamt"] == 4

    # a pass held by someone else (a worker's watcher): said at once, nothing started
    await redis.set(keys.library_pass(root["id"]), "ein-anderer", px=60_000)
    busy = await http.post(f"/library/roots/{root['id']}/reindex", headers=auth(anna))
    assert busy.status_code == 409 and busy.json()["detail"]["fehler"] == "laeuft_bereits"


async def test_progress_written_by_any_process_is_shown(
    http: httpx.AsyncClient, token: Any, folder: Path, redis: aioredis.Redis
) -> None:
    anna = await token("anna")
    root = (
        await http.post("/library/roots", json={"pfad": str(folder)}, headers=auth(anna))
    ).json()
    await until_done(http, anna, root["id"])
    # another API process's pass reports into Redis; this one reads it
    await write_progress(redis, root["id"], Progress(PROGRESS_RUNNING, 12, 40))
    shown = (await http.get("/library/roots", headers=auth(anna))).json()["wurzeln"][0]
    assert shown["fortschritt"] == {
        "zustand": "laeuft",
        "erledigt": 12,
        "gesamt": 40,
        "meldung": "",
    }
    assert 0 < await redis.ttl(keys.library_progress(root["id"])) <= keys.LIBRARY_PROGRESS_TTL


async def test_a_folder_gone_before_its_pass_ends_the_line_with_why(
    http: httpx.AsyncClient, token: Any, folder: Path
) -> None:
    anna = await token("anna")
    root = (
        await http.post("/library/roots", json={"pfad": str(folder)}, headers=auth(anna))
    ).json()
    indexed = await until_done(http, anna, root["id"])
    shutil.rmtree(folder)
    assert (
        await http.post(f"/library/roots/{root['id']}/reindex", headers=auth(anna))
    ).status_code == 202
    failed = await until_done(http, anna, root["id"])
    assert failed["fortschritt"]["zustand"] == "fehlgeschlagen"
    assert failed["fortschritt"]["meldung"] == f"{root['pfad']}: the approved folder is gone"
    assert failed["abschnitte"] == indexed["abschnitte"], "a vanished folder keeps its index"


async def test_the_library_routes_are_documented(http: httpx.AsyncClient) -> None:
    paths = (await http.get("/openapi.json")).json()["paths"]
    roots, one = paths["/library/roots"], paths["/library/roots/{root_id}"]
    assert {"401", "422"} <= set(roots["post"]["responses"]) and "201" in roots["post"]["responses"]
    assert "404" in one["delete"]["responses"]
    assert {"202", "404", "409"} <= set(
        paths["/library/roots/{root_id}/reindex"]["post"]["responses"]
    )
    assert "404" in paths["/library/passages/{passage_id}"]["get"]["responses"]
    assert all(op["security"] == [{"bearer": []}] for op in (roots["get"], roots["post"]))
