// Message controls on the page (docs/behaviour/web.md#message-controls): edit and delete
// on the person's last message, "new answer" and ‹ 2/3 › on Nova's last answer, a stop
// button while a turn runs. The server does the work (api/turns_api.py); what every device
// sees changes through the WebSocket (`antwort_varianten`, `turn_entfernt`, the answer of a
// regenerated turn), so this module only asks and redraws.
"use strict";

import { call, enc, get } from "./api.js";
import { renderMarkdown } from "./markdown.js";
import { onLanguageChange, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

let ctx = null;            // { state, bubble, append } from app.js
const variants = new Map(); // turn id -> { texts, chosen } (chosen null: a new one is coming)
const asked = new Set();    // turn ids whose alternatives were asked for once
let stopButton = null;
let scheduled = false;

export function init(context) {
  ctx = context;
  stopButton = document.createElement("button");
  stopButton.type = "button";
  stopButton.id = "stop";
  stopButton.className = "stop";
  stopButton.hidden = true;
  stopButton.dataset.testid = "stop-turn";
  stopButton.addEventListener("click", stop);
  $("send").before(stopButton);
  new MutationObserver(schedule).observe($("messages"), { childList: true });
  new MutationObserver(schedule).observe($("stage"), { attributes: true, attributeFilter: ["hidden"] });
  onLanguageChange(() => { redrawNotes(); refresh(); });
  schedule();
}

// The character changed: what was kept belongs to the other conversation.
export function reset() {
  variants.clear();
  asked.clear();
  schedule();
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => { scheduled = false; refresh(); });
}

function character() { return ctx.state.character; }

function button(name, label, onClick, text) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = `small control-${name}`;
  b.dataset.testid = `turn-${name}`;
  b.textContent = text ?? t(`turns.${name}`);
  b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}

function running() {
  return ctx.state.open.size > 0 || !$("stage").hidden;
}

// ---------- drawing ----------

function lastOf(selector) {
  const all = $("messages").querySelectorAll(selector);
  return all.length ? all[all.length - 1] : null;
}

export function refresh() {
  if (!ctx) return;
  redrawNotes();
  for (const old of $("messages").querySelectorAll(".msg-controls")) old.remove();
  stopButton.hidden = !running();
  stopButton.textContent = t("turns.stop");
  stopButton.setAttribute("aria-label", t("turns.stopLabel"));
  const user = lastOf("li.msg.user:not(.failed):not(.editing)");
  const nova = lastOf("li.msg.nova[data-turn]");
  const last = lastOf("li.msg:not(.notice):not(.card-greeting)");
  if (!user) return;
  const pending = user === last;
  const answered = nova && nova === last && !nova.classList.contains("impulse")
    && (user.compareDocumentPosition(nova) & Node.DOCUMENT_POSITION_FOLLOWING);
  if (pending || answered) userControls(user);
  if (answered) novaControls(nova);
}

function controlsRow(li) {
  const row = document.createElement("span");
  row.className = "msg-controls";
  li.querySelector(".meta").append(row);
  return row;
}

function messageKey(li) {
  return li.dataset.id || li.dataset.userTurn || "";
}

function userControls(li) {
  if (!messageKey(li)) return;
  const row = controlsRow(li);
  row.append(
    button("edit", t("turns.editLabel"), () => edit(li)),
    button("delete", t("turns.deleteLabel"), () => remove(li)),
  );
}

function novaControls(li) {
  const turn = li.dataset.turn;
  const row = controlsRow(li);
  const kept = variants.get(turn);
  if (!kept && !asked.has(turn)) {
    asked.add(turn);
    get(`/turns/${enc(character())}/variants`)
      .then((v) => { if (v.turn_id === turn) { variants.set(turn, { texts: v.texte, chosen: v.gewaehlt }); schedule(); } })
      .catch(() => {});
  }
  if (kept && kept.chosen !== null && kept.texts.length > 1) {
    const n = kept.chosen + 1, total = kept.texts.length;
    const prev = button("previous", t("turns.previous"), () => choose(li, kept.chosen - 1), "‹");
    prev.disabled = n === 1;
    const next = button("next", t("turns.next"), () => choose(li, kept.chosen + 1), "›");
    next.disabled = n === total;
    const pos = document.createElement("span");
    pos.className = "variant-position";
    pos.dataset.testid = "turn-position";
    pos.textContent = t("turns.position", { n, total });
    pos.setAttribute("aria-label", t("turns.positionLabel", { n, total }));
    pos.setAttribute("role", "status");
    row.append(prev, pos, next);
  }
  if (!running()) row.append(button("regenerate", t("turns.regenerateLabel"), () => regenerate(li)));
}

function setText(li, text) {
  li.querySelector(".text").innerHTML = renderMarkdown(text); // escaped inside
}

function fail(li, err) {
  let n = li.querySelector(".control-reason");
  if (!n) {
    n = document.createElement("span");
    n.className = "control-reason";
    n.setAttribute("role", "alert");
    li.querySelector(".meta").append(n);
  }
  n.textContent = ` ${err.message}`;
}

// ---------- actions ----------

async function regenerate(li) {
  const turn = li.dataset.turn;
  try {
    ctx.state.answered.delete(turn); // its stages are shown again
    const started = await call("POST", `/turns/${enc(character())}/regenerate`, { turn_id: turn });
    variants.set(turn, { texts: started.texte, chosen: null });
    li.classList.add("regenerating");
    schedule();
  } catch (err) {
    ctx.state.answered.add(turn);
    fail(li, err);
  }
}

async function choose(li, index) {
  try {
    const v = await call("POST", `/turns/${enc(character())}/variants/${index}`, { turn_id: li.dataset.turn });
    onVariants({ turn_id: v.turn_id, texte: v.texte, gewaehlt: v.gewaehlt });
  } catch (err) { fail(li, err); }
}

async function remove(li) {
  try {
    const removal = await call("DELETE", `/turns/${enc(character())}/messages/${enc(messageKey(li))}`);
    if (removal.art !== "wird_zurueckgezogen") onRemoved(removal);
  } catch (err) { fail(li, err); }
}

function edit(li) {
  const original = li.dataset.text || li.querySelector(".text").textContent;
  li.classList.add("editing");
  const form = document.createElement("form");
  form.className = "edit-form";
  const box = document.createElement("textarea");
  box.value = original;
  box.rows = 2;
  box.dataset.testid = "edit-box";
  box.setAttribute("aria-label", t("turns.editBox"));
  const save = document.createElement("button");
  save.type = "submit";
  save.className = "small";
  save.textContent = t("turns.save");
  const cancel = button("cancel", t("turns.cancel"), () => { form.remove(); li.classList.remove("editing"); schedule(); });
  form.append(box, save, cancel);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = box.value;
    if (!text.trim() || text === original) return;
    try {
      const done = await call("PUT", `/turns/${enc(character())}/messages/${enc(messageKey(li))}`,
        { text, client_id: ctx.state.clientId });
      if (done.art !== "wird_zurueckgezogen") onRemoved(done);
      else li.remove();
      adopt(text, done.neu.nachrichten_id);
    } catch (err) { fail(li, err); }
  });
  li.append(form);
  box.focus();
  schedule(); // no edit or delete on a message being edited
}

// The new text of an edit, shown and awaited like a message typed into the box.
function adopt(text, id) {
  const { state } = ctx;
  const li = ctx.bubble("user pending", text);
  li.dataset.id = id;
  li.dataset.text = text;
  state.mine.add(id);
  state.rows.set(id, li);
  state.open.add(id);
  ctx.append(li);
}

async function stop() {
  stopButton.disabled = true;
  try {
    await call("POST", `/turns/${enc(character())}/stop`);
  } catch (err) {
    const notice = ctx.bubble("notice", err.message, null);
    ctx.append(notice);
  } finally {
    stopButton.disabled = false;
  }
}

// ---------- what the server says ----------

// The answer of a regenerated turn replaces the answer shown; true when it was one.
export function takeResponse(msg) {
  const li = [...$("messages").querySelectorAll("li.msg.nova[data-turn]")]
    .find((el) => el.dataset.turn === msg.turn_id);
  if (!li) return false;
  const kept = variants.get(msg.turn_id);
  if (!kept || kept.chosen !== null) return true; // the answer shown already (loaded twice)
  const texts = [...kept.texts, msg.nachricht || ""];
  variants.set(msg.turn_id, { texts, chosen: texts.length - 1 });
  setText(li, msg.nachricht || "");
  li.classList.remove("regenerating");
  ctx.state.answered.add(msg.turn_id);
  $("stage").hidden = true;
  schedule();
  return true;
}

export function onVariants(msg) {
  const kept = { texts: msg.texte || [], chosen: msg.gewaehlt };
  variants.set(msg.turn_id, kept);
  const li = [...$("messages").querySelectorAll("li.msg.nova[data-turn]")]
    .find((el) => el.dataset.turn === msg.turn_id);
  if (li && kept.chosen !== null) setText(li, kept.texts[kept.chosen]);
  if (li && kept.chosen === null) {
    li.classList.add("regenerating");
    ctx.state.answered.delete(msg.turn_id);
  }
  schedule();
}

// A message was taken back (here or on another device): its bubbles and answer leave.
export function onRemoved(msg) {
  const { state } = ctx;
  for (const id of msg.nachrichten_ids || []) {
    const li = state.rows.get(id);
    if (li) li.remove();
    state.rows.delete(id);
    state.open.delete(id);
  }
  if (msg.turn_id) {
    for (const li of $("messages").querySelectorAll("li[data-turn], li[data-user-turn], li[data-failed-turn]")) {
      if ([li.dataset.turn, li.dataset.userTurn, li.dataset.failedTurn].includes(msg.turn_id)) li.remove();
    }
    variants.delete(msg.turn_id);
  }
  schedule();
}

// A failure the controls explain: a withdrawn message leaves (true: nothing else to show).
export function takeFailure(msg) {
  const kept = variants.get(msg.turn_id);
  if (kept && kept.chosen === null && msg.grund !== "zurueckgezogen") {
    // a new answer that did not come: the answer shown stays (antwort_varianten follows)
    const li = [...$("messages").querySelectorAll("li.msg.nova[data-turn]")]
      .find((el) => el.dataset.turn === msg.turn_id);
    if (li) {
      li.classList.remove("regenerating");
      fail(li, { message: t("turns.regenerateFailed", { reason: msg.grund }) });
    }
    for (const id of msg.nachrichten_ids || []) ctx.state.open.delete(id);
    ctx.state.answered.add(msg.turn_id);
    $("stage").hidden = true;
    schedule();
    return true;
  }
  if (msg.grund !== "zurueckgezogen") return false;
  onRemoved({ nachrichten_ids: msg.nachrichten_ids, turn_id: null });
  $("stage").hidden = true;
  return true;
}

// After app.js marked a failed turn: a stopped one says so in words.
export function afterFailed(msg) {
  if (msg.grund !== "gestoppt") return;
  for (const id of msg.nachrichten_ids || []) {
    const li = ctx.state.rows.get(id);
    const reason = li && li.querySelector(".reason");
    if (reason) { reason.dataset.stopped = "1"; reason.textContent = ` ${t("turns.stopped")}`; }
  }
  schedule();
}

function redrawNotes() {
  // a stopped turn loaded from the history carries its reason code: said in words too
  for (const reason of $("messages").querySelectorAll("li[data-failed-turn] .reason:not([data-stopped])")) {
    if (/:\s*gestoppt$/.test(reason.textContent.trim())) reason.dataset.stopped = "1";
  }
  for (const reason of $("messages").querySelectorAll(".reason[data-stopped]")) {
    reason.textContent = ` ${t("turns.stopped")}`;
  }
}
