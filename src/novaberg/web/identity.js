// Who the page talks as, and how that person is known (docs/behaviour/web.md#who-you-are):
// the line that says it (the local single user without a key, or the user a key belongs
// to), signing in as another person with a key and signing out again, the person's
// persona (name, short description), and keys for other apps (SillyTavern, Open WebUI,
// `novaberg chat`) that talk as the same person: made here (shown once, with a copy
// button), listed, revoked. Every word comes from the catalogue and is redrawn when the
// language changes.
"use strict";

import { call, enc, get, session } from "./api.js";
import { formatDateTime, onLanguageChange, t } from "./i18n.js";

export const KEY_STORE = "novaberg-token"; // a key the person entered (app.js reads it first)

let root = null;
let badge = null;
let me = null;        // GET /chat/me of the page's token ({user_id, lokal, name}), null until known
let tokens = [];      // GET /tokens
let fresh = null;     // the token just made: {id, label, token}, shown until reloaded

const part = (role) => root.querySelector(`[data-role=${role}]`);

function say(role, text) {
  const el = part(role);
  el.textContent = text;
  el.hidden = !text;
}

// ---------- who ----------

function identityLine() {
  if (!me) return "";
  return t(me.lokal ? "identity.local" : "identity.withKey", { user: me.user_id });
}

function drawWho() {
  const line = identityLine();
  badge.textContent = line;
  badge.hidden = !line;
  part("identity-line").textContent = line;
  part("signout").hidden = !me || me.lokal;
}

// A key is tried before the page switches to it: a wrong one is said here and the page
// keeps talking as before. A right one replaces the page's key; the page reloads, so the
// history, the socket and every panel are the new person's.
async function signIn(ev) {
  ev.preventDefault();
  const input = ev.target.elements.schluessel;
  const key = input.value.trim();
  say("identity-error", "");
  if (!key) {
    input.setAttribute("aria-invalid", "true");
    return say("identity-error", t("identity.keyMissing"));
  }
  const res = await fetch("/chat/me", { headers: { Authorization: `Bearer ${key}` } }).catch(() => null);
  if (!res || !res.ok) {
    input.setAttribute("aria-invalid", "true");
    return say("identity-error", t(res ? "identity.keyRefused" : "identity.unreachable"));
  }
  input.removeAttribute("aria-invalid");
  localStorage.setItem(KEY_STORE, key);
  location.reload();
}

// Signing out forgets the entered key: a local page falls back to its single user, any
// other page asks for a key.
function signOut() {
  localStorage.removeItem(KEY_STORE);
  location.reload();
}

// ---------- persona ----------

let personaTouched = false; // typed into or saved: the form is the person's now

async function loadPersona() {
  const persona = await get("/persona");
  // A slow start can load after the person began to type (or saved, the load still on its
  // way with the persona from before): what they typed is newer than what was loaded.
  if (personaTouched) return;
  const form = part("persona-form");
  form.elements.name.value = persona.name;
  form.elements.beschreibung.value = persona.beschreibung;
}

async function savePersona(ev) {
  ev.preventDefault();
  const form = ev.target;
  say("persona-error", "");
  part("persona-status").textContent = "";
  personaTouched = true;
  try {
    const stored = await call("PUT", "/persona", {
      name: form.elements.name.value,
      beschreibung: form.elements.beschreibung.value,
    });
    form.elements.name.value = stored.name;
    form.elements.beschreibung.value = stored.beschreibung;
    const empty = !stored.name && !stored.beschreibung;
    part("persona-status").textContent = t(empty ? "identity.personaRemoved" : "identity.personaSaved");
  } catch (err) {
    say("persona-error", t("identity.notSaved", { reason: err.message }));
  }
}

// ---------- keys for other apps ----------

function drawTokens() {
  const list = part("token-list");
  list.replaceChildren();
  for (const token of tokens) {
    const li = document.createElement("li");
    li.dataset.tokenId = String(token.id);
    const name = document.createElement("strong");
    name.textContent = token.label || t("identity.tokenUnnamed");
    const when = document.createElement("span");
    when.className = "hint";
    when.textContent = ` · ${t("identity.tokenCreated", { when: formatDateTime(new Date(token.erstellt_am)) })}`;
    li.append(name, when);
    if (token.aktuell) {
      const here = document.createElement("span");
      here.className = "hint";
      here.textContent = ` · ${t("identity.tokenThisPage")}`;
      li.append(here);
    } else {
      const revoke = document.createElement("button");
      revoke.type = "button";
      revoke.className = "small";
      revoke.textContent = t("identity.revoke");
      revoke.setAttribute("aria-label", t("identity.revokeAria", { label: name.textContent }));
      revoke.addEventListener("click", () => revokeToken(token));
      li.append(" ", revoke);
    }
    list.append(li);
  }
  part("token-empty").hidden = tokens.length > 0;
}

function drawFresh() {
  const box = part("token-new");
  box.hidden = !fresh;
  if (!fresh) return;
  part("token-new-text").textContent = t("identity.tokenShownOnce", { label: fresh.label });
  part("token-value").textContent = fresh.token;
}

async function loadTokens() {
  tokens = await get("/tokens");
  drawTokens();
}

async function makeToken(ev) {
  ev.preventDefault();
  const form = ev.target;
  const label = form.elements.label.value.trim();
  say("token-error", "");
  if (!label) {
    form.elements.label.setAttribute("aria-invalid", "true");
    return say("token-error", t("identity.labelMissing"));
  }
  form.elements.label.removeAttribute("aria-invalid");
  try {
    fresh = await call("POST", "/tokens", { label });
  } catch (err) {
    return say("token-error", t("identity.notCreated", { reason: err.message }));
  }
  form.reset();
  part("token-copied").textContent = "";
  drawFresh();
  await loadTokens();
  part("token-copy").focus();
}

async function copyToken() {
  if (!fresh) return;
  let done = false;
  try {
    await navigator.clipboard.writeText(fresh.token);
    done = true;
  } catch {
    // no clipboard (an insecure origin): select the key so Ctrl+C takes it
    const range = document.createRange();
    range.selectNodeContents(part("token-value"));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
  }
  part("token-copied").textContent = t(done ? "identity.copied" : "identity.copyBySelection");
}

async function revokeToken(token) {
  say("token-error", "");
  try {
    await call("DELETE", `/tokens/${enc(String(token.id))}`);
  } catch (err) {
    return say("token-error", t("identity.notRevoked", { reason: err.message }));
  }
  if (fresh && fresh.id === token.id) {
    fresh = null;
    drawFresh();
  }
  part("token-status").textContent = t("identity.revoked", { label: token.label });
  await loadTokens();
}

// ---------- wiring ----------

function drawAll() {
  drawWho();
  drawTokens();
  drawFresh();
  part("apps-address").textContent = `${location.origin}/v1`;
}

/** Wire the identity section under `panel` and the line in `headerBadge`. */
export function mount(panel, headerBadge) {
  root = panel.querySelector("[data-role=identity]");
  badge = headerBadge;
  part("signin-form").addEventListener("submit", signIn);
  part("signout").addEventListener("click", signOut);
  part("persona-form").addEventListener("submit", savePersona);
  part("persona-form").addEventListener("input", () => { personaTouched = true; });
  part("token-form").addEventListener("submit", makeToken);
  part("token-copy").addEventListener("click", copyToken);
  onLanguageChange(drawAll);
  drawAll();
}

/** Ask the server who the page's key belongs to, and load the persona and the keys. */
export async function refresh() {
  if (!session.token) return;
  try {
    me = await get("/chat/me");
  } catch {
    me = null; // a refused key: app.js asks for another
  }
  drawWho();
  if (!me) return;
  await Promise.all([loadPersona(), loadTokens()]).catch((err) => {
    say("token-error", t("identity.notLoaded", { reason: err.message }));
  });
}
