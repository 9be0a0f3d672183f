"""Notifications in the page, in headless Chromium against the real app (docs/behaviour/
reach.md#the-installable-page): the service worker is registered at the root without a
question, the permission is asked only when the person turns notifications on, the
subscription reaches the server, and with the page closed Nova's answer arrives at a local
push service, which checks the VAPID signature and decrypts it with the device's key; the
notification's URL opens the page at that answer. The settings panel lists and removes the
device, shows a Telegram code and switches what goes where.

Headless Chromium cannot subscribe for real here (tried: `AbortError: Registration failed
- permission denied`, notifications granted or not; a real one would need Google's push
service and the network anyway), so the page's `pushManager.subscribe` answers with a
subscription made in the test the way a browser makes one (a P-256 key pair and an auth secret, tests/push_crypto.py); the rest —
the permission flow, the page's requests, the server's encryption — is the real thing."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from browser_kit import ServerThread, run_axe
from playwright.sync_api import Browser, expect

from push_crypto import Device, decrypt, verify_vapid

pytestmark = pytest.mark.browser

ANSWER = "Schön, von **dir** zu hören!"
"""The scripted responder's answer (browser_kit.RULES) as the log holds it."""

FAKE_PUSH = """
(() => {
  window.__asked = 0;
  const ask = Notification.requestPermission.bind(Notification);
  Notification.requestPermission = (...args) => { window.__asked += 1; return ask(...args); };
  let current = null;
  PushManager.prototype.subscribe = async function (options) {
    const key = new Uint8Array(options.applicationServerKey);
    window.__serverKey = btoa(String.fromCharCode(...key))
      .replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
    const made = SUBSCRIPTION;
    current = { endpoint: made.endpoint, toJSON: () => ({ ...made, expirationTime: null }),
                unsubscribe: async () => { current = null; return true; } };
    return current;
  };
  PushManager.prototype.getSubscription = async function () { return current; };
})();
"""


class Received:
    """A push service on a thread: records each request (headers and body), answers 201."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                received.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(201)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait(self, count: int, timeout: float = 30.0) -> list[tuple[dict[str, str], bytes]]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(self.requests) >= count, f"{len(self.requests)} push request(s) arrived"
        return self.requests[:count]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def push_service() -> Iterator[Received]:
    service = Received()
    yield service
    service.close()


def _api(served: ServerThread, token: str, method: str, path: str, body: Any = None) -> Any:
    request = urllib.request.Request(
        served.url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        raw = answer.read()
    return json.loads(raw) if raw else None


def test_notifications_are_turned_on_in_settings_and_a_closed_page_gets_a_push(
    browser: Browser, served: ServerThread, push_service: Received
) -> None:
    device = Device("this-browser")
    subscription = device.subscription(push_service.url)
    context = browser.new_context(locale="de-DE")
    context.grant_permissions(["notifications"], origin=served.url)
    context.add_init_script(FAKE_PUSH.replace("SUBSCRIPTION", json.dumps(subscription)))
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    tab.goto(served.url)
    expect(tab.locator("#connection")).to_have_text("verbunden")
    token = str(tab.evaluate("window.novaberg.token"))

    scope = tab.evaluate("navigator.serviceWorker.ready.then((r) => [r.scope, r.active.scriptURL])")
    assert scope == [served.url + "/", served.url + "/sw.js"], "the worker controls the page"
    assert tab.evaluate("window.__asked") == 0, "no question before the switch"

    tab.get_by_role("button", name="Einstellungen", exact=True).click()
    channels = tab.get_by_test_id("channels")
    toggle = channels.get_by_test_id("push-toggle")
    expect(toggle).not_to_be_checked()
    expect(channels.get_by_test_id("channel-list")).to_contain_text("Noch kein Gerät")
    assert tab.evaluate("window.__asked") == 0, "opening the settings asks nothing either"

    toggle.check()
    expect(channels.get_by_test_id("push-status")).to_have_text(
        "Benachrichtigungen sind auf diesem Gerät an."
    )
    assert tab.evaluate("window.__asked") == 1, "asked once, after the switch"
    server_key = _api(served, token, "GET", "/kanaele/push/schluessel")["schluessel"]
    assert tab.evaluate("window.__serverKey") == server_key, "subscribed under the server's key"
    links = channels.get_by_test_id("channel-link")
    expect(links).to_have_count(1)
    expect(links.first).to_contain_text("Gerät (127.0.0.1) – dieses")
    expect(toggle).to_be_checked()
    serious = {k: v for k, v in run_axe(tab, "channels").items() if k in ("serious", "critical")}

    channels.get_by_test_id("telegram-link").click()
    code = channels.get_by_test_id("telegram-code")
    expect(code).to_contain_text("/start ")

    switch = channels.get_by_test_id("switch-push-erinnerungen")
    switch.uncheck()
    expect(switch).not_to_be_checked()
    for _ in range(100):
        prefs = _api(served, token, "GET", "/settings?character_id=nova")["kanaele"]["push"]
        if not prefs["erinnerungen"]:
            break
        time.sleep(0.05)
    assert prefs == {"antworten": True, "impulse": True, "erinnerungen": False}

    tab.close()  # the page closes: the next outcome goes to the device
    _api(served, token, "POST", "/chat", {"character_id": "nova", "text": "Hallo Nova"})
    [(headers, body)] = push_service.wait(1)
    verify_vapid(headers["authorization"], push_service.url, server_key)
    note = json.loads(decrypt(device, body))
    print("push notification (decrypted):", note)
    assert note["titel"] == "Nova" and note["text"] == ANSWER
    assert note["url"].startswith("/?charakter=nova#turn-")

    turn = note["url"].split("#turn-")[1]
    for _ in range(200):  # the history records the turn just after the answer left
        entries = _api(served, token, "GET", "/history/nova")["eintraege"]
        if any(e["turn_id"] == turn for e in entries):
            break
        time.sleep(0.05)
    assert any(e["turn_id"] == turn for e in entries), entries
    opened = context.new_page()  # what a click on the notification does
    opened.goto(served.url + note["url"])
    expect(opened.locator(".msg.nova.opened")).to_have_count(1)
    expect(opened.locator(".msg.nova.opened")).to_contain_text("Schön, von dir zu hören!")

    opened.get_by_role("button", name="Einstellungen", exact=True).click()
    box = opened.get_by_test_id("channels")
    expect(box.get_by_test_id("push-toggle")).to_be_checked()
    box.get_by_test_id("channel-remove").click()
    expect(box.get_by_test_id("channel-list")).to_contain_text("Noch kein Gerät")
    expect(box.get_by_test_id("push-toggle")).not_to_be_checked()
    assert _api(served, token, "GET", "/kanaele") == []
    context.close()
    assert not serious, serious
