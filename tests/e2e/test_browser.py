"""The real chat page in headless Chromium against the real app (scripted model only):
three messages typed quickly get one answer naming all three (the first one's turn is
superseded before its answer leaves), Nova's panel updates, another device's utterance
and answer are marked, a failed turn offers a retry that works, and a dropped connection
catches up."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from browser_kit import ServerThread, open_page, serve_settings
from playwright.sync_api import Browser, Page, expect

from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints

pytestmark = pytest.mark.browser


def _write(page: Page, text: str) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")


def _ids(page: Page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.id || '')")


def test_three_quick_messages_get_one_answer_naming_all_three(
    page: Page, served: ServerThread
) -> None:
    for text in ("Hey", "Achso, ich wollte sagen...", "...dass ich morgen nicht kann"):
        _write(page, text)
    answers = page.locator(".msg.nova")
    expect(answers).to_have_count(1)
    expect(page.locator(".msg.user.pending")).to_have_count(0)
    user_ids = _ids(page, ".msg.user")
    assert len(user_ids) == 3 and all(user_ids)
    assert answers.first.get_attribute("data-ids") == ",".join(user_ids), "names all three"
    assert page.evaluate("novaberg.open.size") == 0, "every id has its outcome"
    expect(answers.first).to_contain_text("Schön, von dir zu hören!")
    expect(page.locator(".msg.user.failed")).to_have_count(0)
    expect(page.locator(".badge")).to_have_count(0)  # the answer was to this tab
    expect(page.get_by_test_id("panel-emotions")).to_have_attribute("data-observations", "2")
    expect(page.get_by_test_id("stage-line")).to_be_hidden()


def test_other_device_failure_retry_and_catch_up(page: Page, served: ServerThread) -> None:
    token = served.app.state.chat.page_token
    # another device of the same person writes: its utterance and answer are marked
    response = httpx.post(
        f"{served.url}/chat",
        json={"character_id": "nova", "text": "vom Handy", "client_id": "handy"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 202
    expect(page.locator(".msg.user.other")).to_contain_text("vom Handy")
    expect(page.locator(".msg.nova")).to_have_count(1)
    expect(page.locator(".msg.nova .badge")).to_have_text("Antwort an ein anderes Gerät")

    # a turn that fails is shown as failed, with a retry that works
    scripted = served.app.state.context.model.text
    scripted.add("Antworte kurz und natürlich", "", fault="timeout", times=1)
    _write(page, "Bist du da?")
    failed = page.locator(".msg.user.failed")
    expect(failed).to_contain_text("keine Antwort: Das Sprachmodell hat zu lange gebraucht.")
    failed.locator(".retry").click()
    expect(page.locator(".msg.nova")).to_have_count(2)

    # the connection drops; what happens meanwhile arrives after the reconnect
    page.evaluate("novaberg.socket.close()")
    expect(page.locator("#connection")).not_to_have_text("verbunden")
    response = httpx.post(
        f"{served.url}/chat",
        json={"character_id": "nova", "text": "während du weg warst", "client_id": "handy"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 202
    expect(page.locator("#connection")).to_have_text("verbunden")
    expect(page.locator(".msg.user.other")).to_have_count(2)
    expect(page.locator(".msg.nova")).to_have_count(3)


def test_page_without_local_token_asks_for_one(
    endpoints: Endpoints, tmp_path: Path, browser: Browser
) -> None:
    """Served on a non-loopback bind, the page carries no token and asks for one."""
    settings = serve_settings(tmp_path, endpoints, host="0.0.0.0")
    with ServerThread(settings, endpoints) as server:
        tab = browser.new_page()
        tab.goto(f"http://127.0.0.1:{settings.port}")
        expect(tab.locator("#login")).to_be_visible()
        assert server.app.state.chat.page_token is None


def test_novas_own_thought_after_a_sad_message_is_shown_as_hers(
    endpoints: Endpoints, tmp_path: Path, browser: Browser
) -> None:
    """Through the served app with impulses on (waits shortened): a greeting, a sad
    message, silence — and Nova writes on her own, coloured and labelled as her thought."""
    import json
    import time

    import redis as sync_redis
    from impulse_script import GREETING, IMPULSE_ANSWER, RULES, SAD, stance_fields

    from novaberg.store import keys

    rules = tmp_path / "impulse-rules.json"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    settings = serve_settings(
        tmp_path,
        endpoints,
        script=rules,
        pixie=True,
        impulse_silence=2,
        quiet_hours="",
        pixie_cpu_interval=1,
        pixie_llm_interval=1,
    )
    with ServerThread(settings, endpoints) as served:
        page = open_page(browser, served.url)
        _write(page, GREETING)
        expect(page.locator(".msg.nova")).to_have_count(1)
        _write(page, SAD)
        expect(page.locator(".msg.nova")).to_have_count(2)
        # a warm stance, fixed so the closeness gate does not depend on the scripted
        # model's landscape (the stance node wrote its own in these turns)
        with sync_redis.Redis.from_url(endpoints.redis_url) as client:
            pair = Pair(settings.default_user, "nova")
            client.hset(keys.stance(pair), mapping=stance_fields(time.time()))
        thought = page.locator(".msg.nova.impulse")
        expect(thought).to_have_count(1, timeout=60_000)
        expect(thought).to_contain_text(IMPULSE_ANSWER)
        expect(thought.locator(".badge")).to_contain_text("eigener Gedanke")
        colour = thought.evaluate("el => getComputedStyle(el).backgroundColor")
        plain = page.locator(".msg.nova:not(.impulse)").first.evaluate(
            "el => getComputedStyle(el).backgroundColor"
        )
        assert colour != plain, "coloured unlike an answer"
