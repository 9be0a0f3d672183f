// Where Nova reaches the person when no page is open (docs/behaviour/reach.md): this
// device's notifications (Web Push through the service worker, /sw.js), the list of
// subscribed devices and linked Telegram chats with a button to remove each, the
// "Telegram verbinden" code, and which channel gets what (`kanaele` of /settings).
// The browser asks for permission to notify ONLY when the person turns the switch on.
"use strict";

import { call, enc, get } from "./api.js";
import { setText, t, unmark } from "./i18n.js";

const KINDS = { push: "channels.kind.push", telegram: "channels.kind.telegram" };
const CATEGORIES = ["antworten", "impulse", "erinnerungen"];
const LINK_KEY = "novaberg-push-link"; // this device's subscription id on the server

let box = null;
let character = "nova";

const $role = (role) => box.querySelector(`[data-role=${role}]`);

// The switch's status line: the catalogue's `key`, or (null) nothing.
function status(key) {
  if (key) setText($role("push-status"), key);
  else unmark($role("push-status")).textContent = "";
}

// The error line: the catalogue's `key` with `vars`, or (null) nothing.
function problem(key, vars = {}) {
  const p = $role("channel-error");
  if (key) setText(p, key, vars);
  else unmark(p).textContent = "";
  p.hidden = !key;
}

export function pushSupported() {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

// The service worker shows notifications and opens the page on a click; registering it
// asks the person nothing (only subscribing needs their permission).
export async function registerWorker() {
  if (!("serviceWorker" in navigator)) return null;
  return navigator.serviceWorker.register("/sw.js", { scope: "/" });
}

function keyBytes(base64url) {
  const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

async function turnOn() {
  if (!pushSupported()) throw new Error(t("channels.unsupported"));
  const permission = await Notification.requestPermission();
  if (permission !== "granted") throw new Error(t("channels.notAllowed"));
  await registerWorker();
  const reg = await navigator.serviceWorker.ready;
  const { schluessel } = await get("/kanaele/push/schluessel");
  const sub = (await reg.pushManager.getSubscription())
    || (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(schluessel) }));
  const link = await call("POST", "/kanaele/push/geraete", { ...sub.toJSON(), character_id: character });
  localStorage.setItem(LINK_KEY, String(link.id));
}

async function turnOff() {
  const id = localStorage.getItem(LINK_KEY);
  localStorage.removeItem(LINK_KEY);
  if ("serviceWorker" in navigator) {
    const reg = await navigator.serviceWorker.getRegistration("/");
    const sub = reg && (await reg.pushManager.getSubscription());
    if (sub) await sub.unsubscribe();
  }
  if (id) await call("DELETE", `/kanaele/${enc(id)}`).catch((err) => { if (err.status !== 404) throw err; });
}

function describe(link) {
  const mine = String(link.id) === localStorage.getItem(LINK_KEY);
  const what = link.art === "push"
    ? t(mine ? "channels.thisDevice" : "channels.device", { service: link.dienst || "Push" })
    : t("channels.telegramChat", { name: link.character_id });
  if (!link.gestoert_am) return what;
  return t("channels.broken", { what, problem: link.stoerung || t("channels.unknown") });
}

function renderLinks(links) {
  const list = $role("channel-list");
  if (!links.length) {
    const li = document.createElement("li");
    li.className = "hint";
    li.textContent = t("channels.none");
    list.replaceChildren(li);
    return;
  }
  list.replaceChildren(...links.map((link) => {
    const li = document.createElement("li");
    li.dataset.link = String(link.id);
    li.dataset.testid = "channel-link";
    li.append(document.createTextNode(describe(link)));
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "small";
    remove.textContent = t("channels.remove");
    remove.dataset.testid = "channel-remove";
    remove.setAttribute("aria-label", t("channels.removeLabel", { what: describe(link) }));
    remove.addEventListener("click", () => removeLink(link.id).catch((err) => problem("channels.notRemoved", { error: err.message })));
    li.append(remove);
    return li;
  }));
}

function renderSwitches(prefs) {
  const body = $role("channel-switches").querySelector("tbody");
  body.replaceChildren(...Object.keys(KINDS).filter((k) => prefs[k]).map((kind) => {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = t(KINDS[kind]);
    tr.append(th);
    for (const category of CATEGORIES) {
      const td = document.createElement("td");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.checked = Boolean(prefs[kind][category]);
      input.dataset.testid = `switch-${kind}-${category}`;
      input.setAttribute("aria-label", t("channels.switchLabel", { kind: { key: KINDS[kind] }, category: { key: `channels.category.${category}` } }));
      input.addEventListener("change", () => saveSwitch(kind, category, input));
      td.append(input);
      tr.append(td);
    }
    return tr;
  }));
}

async function saveSwitch(kind, category, input) {
  problem(null);
  try {
    const s = await call("PATCH", "/settings", { character_id: character, kanaele: { [kind]: { [category]: input.checked } } });
    renderSwitches(s.kanaele);
  } catch (err) {
    input.checked = !input.checked;
    problem("channels.notSaved", { error: err.message });
  }
}

async function removeLink(id) {
  problem(null);
  await call("DELETE", `/kanaele/${enc(id)}`);
  if (String(id) === localStorage.getItem(LINK_KEY)) await turnOff();
  await refresh();
}

async function showCode() {
  problem(null);
  const { code, gueltig_s: seconds, befehl } = await call("POST", "/kanaele/telegram/code");
  const p = $role("telegram-code");
  p.replaceChildren(
    setText(document.createElement("span"), "channels.codeSend"),
    " ",
    Object.assign(document.createElement("code"), { textContent: befehl }),
    " ",
    setText(document.createElement("span"), "channels.codeValid", { minutes: Math.round(seconds / 60) }),
  );
  p.dataset.code = code;
  p.hidden = false;
}

// Read the links and switches again (after a change, or when the panel opens).
export async function refresh() {
  if (!box) return;
  try {
    const [links, s] = await Promise.all([get("/kanaele"), get(`/settings?character_id=${enc(character)}`)]);
    renderLinks(links);
    renderSwitches(s.kanaele || {});
    const mine = links.find((l) => String(l.id) === localStorage.getItem(LINK_KEY));
    if (!mine) localStorage.removeItem(LINK_KEY);
    $role("push-toggle").checked = Boolean(mine && !mine.gestoert_am);
    if (mine && mine.gestoert_am) status("channels.expired");
  } catch (err) {
    problem("channels.notLoaded", { error: err.message });
  }
}

export function setCharacter(id) {
  character = id;
}

export function mount(panel) {
  box = panel.querySelector("[data-role=channels]");
  const toggle = $role("push-toggle");
  if (!pushSupported()) status("channels.unsupportedHere");
  toggle.addEventListener("change", async () => {
    problem(null);
    toggle.disabled = true;
    try {
      if (toggle.checked) {
        status("channels.turningOn");
        await turnOn();
        status("channels.on");
      } else {
        await turnOff();
        status("channels.off");
      }
    } catch (err) {
      toggle.checked = false;
      status(null);
      problem("channels.failed", { error: err.message });
    } finally {
      toggle.disabled = false;
      await refresh();
    }
  });
  $role("telegram-link").addEventListener("click", () => showCode().catch((err) => problem("channels.noCode", { error: err.message })));
}
