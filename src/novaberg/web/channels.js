// Where Nova reaches the person when no page is open (docs/behaviour/reach.md): this
// device's notifications (Web Push through the service worker, /sw.js), the list of
// subscribed devices and linked Telegram chats with a button to remove each, the
// "Telegram verbinden" code, and which channel gets what (`kanaele` of /settings).
// The browser asks for permission to notify ONLY when the person turns the switch on.
"use strict";

import { call, enc, get } from "./api.js";

const KINDS = { push: "Benachrichtigungen", telegram: "Telegram" };
const CATEGORIES = ["antworten", "impulse", "erinnerungen"];
const LINK_KEY = "novaberg-push-link"; // this device's subscription id on the server

let box = null;
let character = "nova";

const $role = (role) => box.querySelector(`[data-role=${role}]`);

function status(text) {
  $role("push-status").textContent = text;
}

function problem(text) {
  const p = $role("channel-error");
  p.textContent = text;
  p.hidden = !text;
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
  if (!pushSupported()) throw new Error("Dieser Browser kann keine Benachrichtigungen empfangen");
  const permission = await Notification.requestPermission();
  if (permission !== "granted") throw new Error("Benachrichtigungen sind im Browser nicht erlaubt");
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
    ? `Gerät (${link.dienst || "Push"})${mine ? " – dieses" : ""}`
    : `Telegram-Chat mit ${link.character_id}`;
  return link.gestoert_am ? `${what} – gestört: ${link.stoerung || "unbekannt"}` : what;
}

function renderLinks(links) {
  const list = $role("channel-list");
  if (!links.length) {
    const li = document.createElement("li");
    li.className = "hint";
    li.textContent = "Noch kein Gerät und kein Chat.";
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
    remove.textContent = "entfernen";
    remove.dataset.testid = "channel-remove";
    remove.setAttribute("aria-label", `${describe(link)} entfernen`);
    remove.addEventListener("click", () => removeLink(link.id).catch((err) => problem(`nicht entfernt: ${err.message}`)));
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
    th.textContent = KINDS[kind];
    tr.append(th);
    for (const category of CATEGORIES) {
      const td = document.createElement("td");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.checked = Boolean(prefs[kind][category]);
      input.dataset.testid = `switch-${kind}-${category}`;
      input.setAttribute("aria-label", `${KINDS[kind]}: ${category}`);
      input.addEventListener("change", () => saveSwitch(kind, category, input));
      td.append(input);
      tr.append(td);
    }
    return tr;
  }));
}

async function saveSwitch(kind, category, input) {
  problem("");
  try {
    const s = await call("PATCH", "/settings", { character_id: character, kanaele: { [kind]: { [category]: input.checked } } });
    renderSwitches(s.kanaele);
  } catch (err) {
    input.checked = !input.checked;
    problem(`nicht gespeichert: ${err.message}`);
  }
}

async function removeLink(id) {
  problem("");
  await call("DELETE", `/kanaele/${enc(id)}`);
  if (String(id) === localStorage.getItem(LINK_KEY)) await turnOff();
  await refresh();
}

async function showCode() {
  problem("");
  const { code, gueltig_s: seconds, befehl } = await call("POST", "/kanaele/telegram/code");
  const p = $role("telegram-code");
  p.replaceChildren(
    document.createTextNode("Schick deinem Novaberg-Bot in Telegram: "),
    Object.assign(document.createElement("code"), { textContent: befehl }),
    document.createTextNode(` (gilt ${Math.round(seconds / 60)} Minuten, einmal).`),
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
    if (mine && mine.gestoert_am) status("Die Benachrichtigungen dieses Geräts sind abgelaufen; schalte sie neu ein.");
  } catch (err) {
    problem(`Kanäle nicht geladen: ${err.message}`);
  }
}

export function setCharacter(id) {
  character = id;
}

export function mount(panel) {
  box = panel.querySelector("[data-role=channels]");
  const toggle = $role("push-toggle");
  if (!pushSupported()) status("Dieser Browser kann keine Benachrichtigungen empfangen.");
  toggle.addEventListener("change", async () => {
    problem("");
    toggle.disabled = true;
    try {
      if (toggle.checked) {
        status("schalte ein …");
        await turnOn();
        status("Benachrichtigungen sind auf diesem Gerät an.");
      } else {
        await turnOff();
        status("Benachrichtigungen sind auf diesem Gerät aus.");
      }
    } catch (err) {
      toggle.checked = false;
      status("");
      problem(err.message);
    } finally {
      toggle.disabled = false;
      await refresh();
    }
  });
  $role("telegram-link").addEventListener("click", () => showCode().catch((err) => problem(`kein Code: ${err.message}`)));
}
