// Novaberg chat page: POST /chat to write, one WebSocket (/ws) to hear everything, the
// history from GET /history. No build step: plain ES modules, one job each.
// Answers are placed by the nachrichten_ids they name (docs/behaviour/events.md#release):
// the tab keeps the set of ids it sent; an answer naming only ids it never sent came from
// another device of the same user.
"use strict";

import { get, headers, session } from "./api.js";
import { renderMarkdown } from "./markdown.js";
import { History } from "./history.js";
import * as emotions from "./emotions.js";
import * as memory from "./memory.js";
import * as tasks from "./tasks.js";
import * as inspector from "./inspector.js";
import * as settings from "./settings.js";
import * as modelSettings from "./model_settings.js";
import * as library from "./library.js";
import * as cards from "./cards.js";
import { decorate, settleQuestions } from "./answer_extras.js";
import * as pause from "./pause.js";
import * as channels from "./channels.js";
import * as composer from "./composer.js";
import * as identity from "./identity.js";
import * as chats from "./chats.js";
import * as controls from "./message_controls.js";
import { has, onLanguageChange, setAttr, setText, t, timeElement, translatePage, unmark } from "./i18n.js";
import { greetingBubble, keepAnswered } from "./greeting_bubble.js";
import { characterName, setCharacter, speaker } from "./character.js";
import * as editor from "./character_editor.js";
import { importedEntry } from "./imported.js";

const $ = (id) => document.getElementById(id);
const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.content || "";
const IMPULSE = "eigener_impuls";
const OPENING = "eroeffnung"; // a card greeting the person answered (wire.py ORIGIN_OPENING)
const STOPPED = "gestoppt"; // a failed turn's reason when the person stopped it (events/outcomes.py)
const CLOSE_UNAUTHORIZED = 4401; // the socket's "token refused" (events/outcomes.py)


// A notification opens the page as /?charakter=ID#turn-TURN (reach/push.py): that
// conversation, scrolled to that answer.
const opened = {
  character: new URLSearchParams(location.search).get("charakter"),
  turn: location.hash.startsWith("#turn-") ? decodeURIComponent(location.hash.slice(6)) : "",
};

const state = {
  // a key the person entered (identity.js) wins over the local page token
  token: localStorage.getItem(identity.KEY_STORE) || meta("novaberg-token") || "",
  character: opened.character || localStorage.getItem("novaberg-character") || meta("novaberg-character") || "nova",
  clientId: sessionStorage.getItem("novaberg-client") || crypto.randomUUID().replace(/-/g, ""),
  lastSeq: null,        // highest seq seen; reconnects ask for what came after
  mine: new Set(),      // nachrichten_ids this tab sent (and had acknowledged)
  rows: new Map(),      // nachrichten_id -> <li> of an utterance shown here (any device)
  open: new Set(),      // my ids still waiting for an outcome
  inflight: new Set(),  // POSTs not yet acknowledged (their ids are unknown so far)
  answered: new Set(),  // turn ids whose outcome arrived: their post-run stays off the line
  shownTurns: new Set(),// turn ids with an answer on the page (history and live)
  history: null,
  socket: null,
  retryDelay: 500,
};
session.token = state.token;
sessionStorage.setItem("novaberg-client", state.clientId);

// ---------- rendering ----------

function bubble(kind, text, ts, markdown = false) {
  const li = document.createElement("li");
  li.className = `msg ${kind}`;
  const body = document.createElement("div");
  body.className = "text";
  if (markdown) body.innerHTML = renderMarkdown(text); // escaped inside
  else body.textContent = text;
  li.append(body);
  const m = document.createElement("span");
  m.className = "meta";
  if (ts !== null) m.append(timeElement(ts ? new Date(ts * 1000) : new Date()));
  li.append(m);
  return li;
}

function novaBubble(text, ts, turnId, origin) {
  const impulse = origin === IMPULSE;
  const li = bubble("nova" + (impulse ? " impulse" : ""), text, ts, true);
  li.prepend(speaker()); // the character's avatar and name
  if (impulse) badge(li, "app.ownThought");
  if (origin === OPENING) {
    li.classList.add("opening"); // the card greeting the person answered
    badge(li, null, {}, `👋 ${t("chars.opening")}`);
  }
  if (turnId) {
    li.dataset.turn = turnId;
    state.shownTurns.add(turnId);
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "inspect small";
    setText(btn, "app.inspect");
    setAttr(btn, "aria-label", "app.inspectLabel");
    btn.addEventListener("click", () => {
      showPanel("turn-inspector");
      inspector.show(turnId);
    });
    li.querySelector(".meta").append(btn);
  }
  return li;
}

// A badge over a bubble: the catalogue's `key`, or (`key` null) the given text as is.
function badge(li, key, vars = {}, text = "") {
  const b = document.createElement("span");
  b.className = "badge";
  if (key) setText(b, key, vars);
  else b.textContent = text;
  const who = li.querySelector(":scope > .speaker");
  if (who) who.after(b);
  else li.prepend(b);
}

// A failed turn's `grund` (`modell_timeout (nach responder)`) as a sentence of the
// catalogue (`errors.<code>`); a code the page does not know yet reads as the general one.
function reasonOf(grund) {
  const code = String(grund || "").split(" ", 1)[0].split(":", 1)[0].split("(", 1)[0];
  return { key: has(`errors.${code}`) ? `errors.${code}` : "errors.unknown" };
}

function scrollDown() {
  const list = $("messages");
  list.scrollTop = list.scrollHeight;
}

function append(li) {
  $("messages").append(li);
  scrollDown();
  return li;
}

// Place `li` after the last of my utterances it refers to (and after any answers
// already following it); otherwise at the end.
function placeAfter(ids, li) {
  const anchors = ids.map((id) => state.rows.get(id)).filter(Boolean);
  if (!anchors.length) return append(li);
  let anchor = anchors.reduce((a, b) =>
    a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? b : a);
  while (anchor.nextElementSibling && !anchor.nextElementSibling.classList.contains("user")) {
    anchor = anchor.nextElementSibling;
  }
  anchor.after(li);
  scrollDown();
  return li;
}

// The stage line: what the character does now, from the catalogue by the node
// (`stage.<node>`), else the server's label; redrawn when the language changes.
function showStage(node, label = "") {
  const line = $("stage-text");
  if (!node) {
    unmark(line).textContent = "";
    $("stage").hidden = true;
    return;
  }
  const action = has(`stage.${node}`) ? { key: `stage.${node}` } : label;
  setText(line, "stage.line", { name: characterLabel(), action });
  $("stage").hidden = false;
}

// The error line under the box: the catalogue's `key` with `vars`, or nothing.
function showError(key, vars = {}) {
  if (key) setText($("error"), key, vars);
  else unmark($("error")).textContent = "";
  $("error").hidden = !key;
}

// ---------- history ----------

function historyNodes(entries) {
  const frag = document.createDocumentFragment();
  for (const e of entries) {
    if (e.turn_id && state.shownTurns.has(e.turn_id)) continue; // already shown live
    if (e.gescheitert) {
      frag.append(failedEntry(e));
      continue;
    }
    if (e.importiert) {
      frag.append(importedEntry(e, bubble, t("chars.you")));
      continue;
    }
    if (e.reiz_herkunft !== IMPULSE && e.eingabe) {
      const mine = frag.appendChild(bubble("user history", e.eingabe, e.zeit));
      if (e.turn_id) mine.dataset.userTurn = e.turn_id; // the message controls' handle
    }
    const li = novaBubble(e.nachricht, e.zeit, e.turn_id, e.reiz_herkunft);
    li.classList.add("history");
    frag.append(li);
  }
  return frag;
}

// A turn that ended without an answer, as recorded: the texts, the reason, a retry.
function failedEntry(e) {
  const li = bubble("user history failed", e.eingabe || t("app.textNotStored"), e.zeit);
  li.dataset.failedTurn = e.turn_id || "";
  failureNote(li, e.grund);
  if (e.eingaben && e.eingaben.length) addRetry(li, e.eingaben);
  return li;
}

async function loadOlder(first = false) {
  const list = $("messages");
  const history = state.history;
  if (!history || !history.more) return;
  try {
    const entries = await history.older();
    if (history !== state.history) return; // the character changed meanwhile
    const before = list.scrollHeight - list.scrollTop;
    list.prepend(historyNodes(entries));
    for (const e of entries) emotions.observe({ t: e.zeit, ...e }, false);
    if (entries.length) emotions.draw();
    if (first) scrollDown();
    else list.scrollTop = list.scrollHeight - before;
    list.dataset.historyMore = String(history.more);
  } catch (err) {
    showError("app.historyNotLoaded", { error: err.message });
  }
}

// ---------- a card's greeting ----------

let me = null; // Promise of the signed-in person's name (GET /chat/me), asked once
function myName() {
  if (!me) me = get("/chat/me").then((m) => m.name || m.user_id).catch(() => { me = null; return t("app.you"); });
  return me;
}

// An empty conversation with a character whose card has greetings: the first on top, the
// others browsable, names filled in, marked as the card's; stored only once answered.
async function greet(history) {
  if (history.more || history.count) return; // not empty, or not loaded
  let character;
  try {
    character = await get(`/characters/${encodeURIComponent(history.character)}`);
  } catch (err) { return; }
  const user = await myName();
  if (history !== state.history || $("messages").querySelector(".card-greeting")) return;
  const li = greetingBubble(character, user, { bubble, render: renderMarkdown });
  if (li) $("messages").prepend(li);
}

async function openHistory() {
  const history = state.history;
  await loadOlder(true);
  await greet(history);
}

// ---------- sending ----------

async function send(text) {
  settleQuestions($("messages")); // whatever is sent now answers an open question
  chats.noteSent(text);
  const li = append(bubble("user pending", text));
  await keepAnswered($("messages"), state.character); // the greeting answered: the opening
  const pending = {};
  const done = new Promise((resolve) => (pending.resolve = resolve));
  state.inflight.add(done);
  try {
    const res = await fetch("/chat", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ character_id: state.character, text, client_id: state.clientId }),
    });
    const body = await res.json().catch(() => ({}));
    if (res.status === 401) return askToken(li, text, "connection.keyRefused");
    if (res.status !== 202) {
      // refused (too long, too many, ...): back into the box with the reason in words
      const sentence = body.meldung || composer.refusedText(res.status);
      if (res.status < 500 && composer.giveBack(text, sentence)) {
        li.remove();
        return;
      }
      li.classList.remove("pending");
      li.classList.add("failed");
      note(li, null, {}, sentence);
      return;
    }
    li.dataset.id = body.nachrichten_id;
    li.dataset.text = text;
    state.mine.add(body.nachrichten_id);
    state.rows.set(body.nachrichten_id, li);
    state.open.add(body.nachrichten_id);
  } catch (err) {
    li.classList.remove("pending");
    li.classList.add("failed");
    note(li, "connection.notSent");
    addRetry(li, [text]);
  } finally {
    state.inflight.delete(done);
    pending.resolve();
  }
}

// The reason under a bubble: the catalogue's `key` with `vars`, or (`key` null) `text`
// as is (a sentence the server already said in the page's language).
function note(li, key, vars = {}, text = "") {
  let n = li.querySelector(".reason");
  if (!n) {
    n = document.createElement("span");
    n.className = "reason";
    li.querySelector(".meta").append(" ", n);
  }
  if (key) setText(n, key, vars);
  else unmark(n).textContent = text;
}

// Why a turn brought no answer, in words; a turn the person stopped says just that.
function failureNote(li, grund) {
  if (String(grund || "").startsWith(STOPPED)) {
    note(li, "turns.stopped");
    li.querySelector(".reason").dataset.stopped = "1";
  } else note(li, "app.noAnswer", { reason: reasonOf(grund) });
}

function addRetry(li, texts) {
  if (li.querySelector(".retry")) return;
  const btn = document.createElement("button");
  btn.className = "retry small";
  btn.type = "button";
  setText(btn, "app.retry");
  btn.addEventListener("click", () => {
    btn.remove();
    li.classList.add("resent");
    texts.forEach((t) => send(t));
    $("input").focus();
  });
  li.querySelector(".meta").append(btn);
}

// ---------- receiving ----------

async function settleInflight() {
  // An answer can only name ids of this tab once their POSTs were acknowledged.
  while (state.inflight.size) await Promise.all([...state.inflight]);
}

let refreshTimer = null;
function refreshPanelsSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => { memory.refresh(); tasks.refresh(); chats.refresh().catch(() => {}); }, 400);
}

async function onResponse(msg) {
  const ids = msg.nachrichten_ids || [];
  if (ids.some((id) => !state.mine.has(id))) await settleInflight();
  const ours = ids.filter((id) => state.mine.has(id));
  const li = novaBubble(msg.nachricht || "", msg.gesendet_am, msg.turn_id, msg.reiz_herkunft);
  decorate(li, msg, { answer: (text) => { send(text); $("input").focus(); }, openTasks });
  if (msg.reiz_herkunft !== IMPULSE) {
    if (!ids.length) badge(li, "app.continues");
    else if (!ours.length) badge(li, "app.answerElsewhere");
  }
  ours.forEach((id) => {
    state.open.delete(id);
    state.rows.get(id).classList.remove("pending");
  });
  if (ids.some((id) => state.rows.has(id))) placeAfter(ids, li);
  else append(li);
  li.dataset.ids = ids.join(",");
  state.answered.add(msg.turn_id);
  emotions.observe({ t: msg.gesendet_am, ...msg });
  refreshPanelsSoon();
  showStage(null);
}

async function onFailed(msg) {
  const ids = msg.nachrichten_ids || [];
  if (ids.some((id) => !state.mine.has(id))) await settleInflight();
  const ours = ids.filter((id) => state.mine.has(id));
  state.answered.add(msg.turn_id);
  showStage(null);
  if (!ours.length) {
    const notice = bubble("notice", "");
    const vars = { name: characterLabel(), reason: reasonOf(msg.grund) };
    setText(notice.querySelector(".text"), ids.length ? "app.failedElsewhere" : "app.failedOwn", vars);
    append(notice);
    return;
  }
  ours.forEach((id) => {
    state.open.delete(id);
    const li = state.rows.get(id);
    li.classList.remove("pending");
    li.classList.add("failed");
    failureNote(li, msg.grund);
  });
  const last = state.rows.get(ours[ours.length - 1]);
  addRetry(last, ours.map((id) => state.rows.get(id).dataset.text));
  last.dataset.failedTurn = msg.turn_id;
}

function onUtterance(msg) {
  if ((msg.client_ids || []).includes(state.clientId)) return;
  for (const u of msg.aeusserungen || []) {
    if (state.rows.has(u.nachrichten_id)) continue;
    const li = bubble("user other", u.prompt, u.empfangen_am);
    badge(li, "app.fromOtherDevice");
    li.dataset.id = u.nachrichten_id;
    state.rows.set(u.nachrichten_id, li); // answers to it are placed after it
    append(li);
  }
}

function characterLabel() {
  const option = $("character-picker").selectedOptions[0];
  return option ? option.textContent : state.character;
}

// The side panels say the shown character's name (emotion sentence, legend, memory, inspector).
function namePanels() {
  for (const panel of [emotions, memory, inspector]) panel.setCharacterName(characterLabel());
}

function onMessage(msg) {
  if (typeof msg.seq === "number") {
    if (state.lastSeq !== null && msg.seq <= state.lastSeq) return; // already seen
    state.lastSeq = msg.seq;
  }
  if (msg.character_id && msg.character_id !== state.character) return;
  switch (msg.typ) {
    case "verbindung":
      if (state.lastSeq === null) state.lastSeq = msg.seq_aktuell;
      break;
    case "character_stage":
      if (state.answered.has(msg.turn_id)) break; // post-run after the answer: no stage line
      if (pause.isPaused(state.character)) break; // only stored: the banner says why
      showStage(msg.node, msg.label);
      $("stage").dataset.node = msg.node;
      break;
    case "character_response":
      if (!controls.takeResponse(msg)) onResponse(msg); // a regenerated answer replaces
      break;
    case "turn_gescheitert":
      if (!controls.takeFailure(msg)) onFailed(msg).then(() => controls.afterFailed(msg));
      break;
    case "antwort_varianten":
      controls.onVariants(msg);
      break;
    case "turn_entfernt":
      controls.onRemoved(msg);
      break;
    case "user_utterance":
      onUtterance(msg);
      break;
  }
}

function connect() {
  if (!state.token) return askToken();
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const params = new URLSearchParams({ token: state.token, client_id: state.clientId });
  if (state.lastSeq !== null) params.set("since", String(state.lastSeq));
  const ws = new WebSocket(`${proto}://${location.host}/ws?${params}`);
  state.socket = ws;
  ws.onopen = () => {
    state.retryDelay = 500;
    badge$("connection.online", "online");
  };
  ws.onmessage = (ev) => {
    try { onMessage(JSON.parse(ev.data)); } catch (err) { console.error(err); }
  };
  ws.onclose = (ev) => {
    if (ws !== state.socket) return; // replaced after a new sign-in
    if (ev.code === CLOSE_UNAUTHORIZED) return askToken(null, "", "connection.keyRefused");
    badge$("connection.reconnecting", "offline");
    if (ev.code === 4400) state.lastSeq = null; // a bad resume point: start afresh
    setTimeout(connect, state.retryDelay);
    state.retryDelay = Math.min(state.retryDelay * 2, 10000);
  };
}

// The connection badge: what is the matter, and (offline) what to do.
function badge$(key, kind) {
  setText($("connection"), key);
  $("connection").className = `connection ${kind}`;
}

// The sign-in dialog, with why it opened when a key was refused (`reason`); a refused
// message `text` is sent again once a key is given.
function askToken(li, text, reason = "") {
  if (li) li.remove();
  localStorage.removeItem("novaberg-token");
  badge$(reason ? "connection.refusedKey" : "connection.signedOut", "offline");
  if (reason) setText($("login-reason"), reason);
  else unmark($("login-reason")).textContent = "";
  $("login-reason").hidden = !reason;
  const dlg = $("login");
  if (dlg.open) return;
  dlg.showModal();
  $("login-form").onsubmit = () => {
    state.token = $("token-input").value.trim();
    session.token = state.token;
    localStorage.setItem("novaberg-token", state.token);
    const old = state.socket;
    state.socket = null;
    if (old && old.readyState <= WebSocket.OPEN) old.close();
    connect();
    if (text) send(text);
    if (!started || reason) restart();
  };
}

// ---------- panels and characters ----------

function showPanel(id) {
  for (const btn of document.querySelectorAll(".tabs button")) {
    const on = btn.dataset.panel === id;
    btn.setAttribute("aria-pressed", String(on));
    $(btn.dataset.panel).hidden = !on;
  }
  if (id === "panel-memory") memory.refresh();
  if (id === "panel-tasks") tasks.refresh();
  if (id === "panel-settings") {
    library.refresh();
    channels.refresh();
    modelSettings.refresh();
  }
}

// The tasks panel, scrolled to the list a receipt names (its heading takes the focus);
// a library receipt opens the settings at the library instead.
function openTasks(kind) {
  const panel = kind === "library" ? "panel-settings" : "panel-tasks";
  showPanel(panel);
  const heading =
    kind === "library"
      ? $("h-library")
      : $("panel-tasks").querySelector(`[data-kind="${kind}"] h3`);
  if (!heading) return;
  heading.setAttribute("tabindex", "-1");
  heading.scrollIntoView({ block: "nearest" });
  heading.focus();
}

function selectCharacter(id) {
  state.character = id;
  localStorage.setItem("novaberg-character", id);
  cards.markSelected($("character-avatars"), id);
  showCharacter(id);
  pause.show(id, characterLabel());
  namePanels();
  $("messages").replaceChildren();
  state.rows.clear();
  state.shownTurns.clear();
  controls.reset();
  emotions.reset();
  memory.setCharacter(id);
  settings.setCharacter(id);
  channels.setCharacter(id);
  chats.setCharacter(id, characterLabel());
}

// One chat of the shown character on the page (null: its whole history, chats unread).
// The first one after loading keeps what arrived live meanwhile, as the history always did.
async function showChat(chat) {
  const shown = state.history;
  if (shown && (shown.character !== state.character || shown.chat !== chat)) {
    $("messages").replaceChildren();
    state.rows.clear();
    state.shownTurns.clear();
    emotions.reset();
  }
  state.history = new History(state.character, chat, chats.isFirst(chat)); // imported: first chat
  await openHistory();
}

// The answer (or failed turn) a notification pointed at: looked for in the history (a few pages back at
// most), scrolled into view and marked.
async function showOpenedTurn() {
  if (!opened.turn) return;
  const find = () => [...$("messages").querySelectorAll("li[data-turn], li[data-failed-turn]")]
    .find((li) => li.dataset.turn === opened.turn || li.dataset.failedTurn === opened.turn);
  for (let page = 0; !find() && page < 5 && state.history && state.history.more; page++) await loadOlder();
  const li = find();
  if (!li) return;
  li.classList.add("opened");
  li.setAttribute("tabindex", "-1");
  li.scrollIntoView({ block: "center" });
  li.focus();
}

let known = []; // the characters of the last GET /characters

// The shown character for every module that names it (character.js) and for the editor.
function showCharacter(id) {
  const c = known.find((k) => k.character_id === id) || { character_id: id, name: characterLabel() };
  setCharacter(c);
  editor.show(c);
}

async function loadCharacters() {
  const picker = $("character-picker");
  const since = pause.asked();
  let list = [];
  try {
    // the list comes in pages (the caller's own characters are capped, so a few at most)
    let after = null;
    do {
      const query = after === null ? "" : `&after=${encodeURIComponent(after)}`;
      const page = await get(`/characters?limit=200${query}`);
      list = list.concat(page.characters);
      after = page.weiter;
    } while (after !== null && list.length < 2000);
  } catch (err) { list = []; }
  if (!list.some((c) => c.character_id === state.character)) {
    list.push({ character_id: state.character, name: state.character, beschreibung: "" });
  }
  picker.replaceChildren(...list.map((c) => {
    const o = document.createElement("option");
    o.value = c.character_id;
    o.textContent = c.name;
    o.title = c.beschreibung;
    return o;
  }));
  picker.value = state.character;
  known = list;
  showCharacter(state.character);
  pause.know(list, since);
  pause.show(state.character, characterLabel());
  namePanels();
  cards.showAvatars($("character-avatars"), list, state.character, (id) => {
    picker.value = id;
    selectCharacter(id);
  });
}

// After a refused key the first start found nothing (every read was refused): again.
function restart() {
  $("messages").replaceChildren();
  state.history = null; // nothing shown: the chat opened next starts from an empty list
  state.rows.clear();
  state.shownTurns.clear();
  showError(null);
  started = false;
  start();
}

let started = false;
async function start() {
  if (started || !state.token) return;
  started = true;
  await loadCharacters();
  settings.load($("panel-settings"), $("demo-banner"))
    .then((s) => {
      emotions.setWheel(s.emotionsrad, s.sektoren);
      composer.setLimit(s.text_max_bytes);
    })
    .catch((err) => showError("app.settingsNotLoaded", { error: err.message }));
  memory.setCharacter(state.character);
  settings.setCharacter(state.character);
  channels.setCharacter(state.character);
  library.refresh();
  identity.refresh();
  modelSettings.refresh();
  await chats.setCharacter(state.character, characterLabel());
  await showOpenedTurn();
}

// ---------- wiring ----------

cards.mount(document.body, $("card-file"), $("card-status"), async (id) => {
  state.character = id;
  await loadCharacters();
  selectCharacter(id);
});
editor.mount($("character-editor"), $("character-edit"), $("character-new"), async (id) => {
  state.character = id;
  await loadCharacters();
  selectCharacter(id);
});
emotions.mount($("panel-emotions"));
memory.mount($("panel-memory"), state.character);
tasks.mount($("panel-tasks"));
inspector.mount($("turn-inspector"));
settings.mount($("panel-settings"));
library.mount($("panel-settings"));
channels.mount($("panel-settings"));
identity.mount($("panel-settings"), $("identity-badge"));
modelSettings.mount($("panel-settings"));
channels.registerWorker().catch((err) => console.warn("service worker not registered", err));
pause.mount($("character-pause"), $("paused-banner"));
chats.mount($("chats"), showChat);

composer.mount($("input"), $("input-count"), $("input-reason"));
controls.init({ state, bubble, append });
$("composer").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("input").value;
  if (!text.trim()) return;
  const refused = composer.refusal(text);
  if (refused) return composer.showReason(refused); // stays in the box
  $("input").value = "";
  composer.sent();
  showError(null);
  send(text);
});
$("input").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) {
    ev.preventDefault();
    $("composer").requestSubmit();
  }
});
$("messages").addEventListener("scroll", () => {
  if ($("messages").scrollTop < 60) loadOlder();
});
$("character-picker").addEventListener("change", (ev) => selectCharacter(ev.target.value));
for (const btn of document.querySelectorAll(".tabs button")) {
  btn.addEventListener("click", () => showPanel(btn.dataset.panel));
}

window.novaberg = state; // for debugging and the browser test
// Text drawn from the catalogue is marked and redrawn by translatePage; what depends on
// the language beyond that (the character picker's pause button, panels) listens itself.
onLanguageChange(() => {
  if (started) {
    tasks.refresh();
    library.refresh();
    if (!$("panel-settings").hidden) channels.refresh();
  }
});
settings.mountLanguage($("panel-settings"));
connect();
translatePage();
start();
