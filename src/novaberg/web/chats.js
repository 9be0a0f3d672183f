// The chats with the shown character (docs/behaviour/web.md#chats): a list to switch
// between them, "new chat", rename, delete (confirmed in place) and the export as Markdown
// or JSON. A chat is a thread of the pair's conversation; her memory stays one per pair.
// The open chat is the server's (POST /chats/{id}/open): the one new turns go to, and the
// one whose messages app.js shows (`onOpen(chatId)` after every switch).
"use strict";

import { call, enc, get, session } from "./api.js";
import { formatDateTime, language, onLanguageChange, t } from "./i18n.js";

let root = null;
let onOpen = async () => {};
let shown = { id: "", name: "" }; // the character
let list = [];                    // GET /chats, newest first
let early = null;                 // first words of a message sent before the list came
let current = null;               // the open chat's id
const el = {};

function make(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

/** Whether `id` is the pair's first chat (the oldest; or none listed yet): the one that
 * holds what came before chats, and the chats imported for the character. */
export const isFirst = (id) => !list.length || list[list.length - 1].id === id;

export function mount(container, opened) {
  root = container;
  onOpen = opened;
  root.classList.add("chat-row");
  root.setAttribute("role", "group");
  el.label = make("label", { class: "picker" });
  el.labelText = make("span");
  el.picker = make("select", { id: "chat-picker", "data-testid": "chat-picker" });
  el.label.append(el.labelText, el.picker);
  el.create = make("button", { type: "button", class: "small", "data-testid": "chat-new" });
  el.rename = make("button", { type: "button", class: "small", "data-testid": "chat-rename" });
  el.remove = make("button", { type: "button", class: "small", "data-testid": "chat-delete" });
  el.exports = make("span", { role: "group", class: "chat-exports" });
  el.markdown = make("button", { type: "button", class: "small", "data-testid": "chat-export-md" });
  el.json = make("button", { type: "button", class: "small", "data-testid": "chat-export-json" });
  el.exports.append(el.markdown, el.json);

  el.form = make("form", { class: "chat-form", "data-testid": "chat-rename-form" });
  el.form.hidden = true;
  el.titleLabel = make("label", { for: "chat-title" });
  el.title = make("input", { id: "chat-title", maxlength: "120", autocomplete: "off" });
  el.save = make("button", { type: "submit", class: "small" });
  el.cancelRename = make("button", { type: "button", class: "small" });
  el.form.append(el.titleLabel, el.title, el.save, el.cancelRename);

  el.confirm = make("div", { class: "chat-form", role: "group", "data-testid": "chat-confirm" });
  el.confirm.hidden = true;
  el.question = make("span", { id: "chat-confirm-text" });
  el.confirm.setAttribute("aria-labelledby", "chat-confirm-text");
  el.yes = make("button", { type: "button", class: "small danger", "data-testid": "chat-delete-yes" });
  el.no = make("button", { type: "button", class: "small" });
  el.confirm.append(el.question, el.yes, el.no);

  el.status = make("span", { class: "hint", role: "status", "data-testid": "chat-status" });
  root.append(el.label, el.create, el.rename, el.remove, el.exports, el.form, el.confirm, el.status);

  el.picker.addEventListener("change", () => open(el.picker.value));
  el.create.addEventListener("click", create);
  el.rename.addEventListener("click", startRename);
  el.cancelRename.addEventListener("click", endRename);
  el.form.addEventListener("submit", (ev) => { ev.preventDefault(); rename(); });
  el.form.addEventListener("keydown", (ev) => { if (ev.key === "Escape") endRename(); });
  el.remove.addEventListener("click", askDelete);
  el.no.addEventListener("click", endDelete);
  el.confirm.addEventListener("keydown", (ev) => { if (ev.key === "Escape") endDelete(); });
  el.yes.addEventListener("click", remove);
  el.markdown.addEventListener("click", () => download("md"));
  el.json.addEventListener("click", () => download("json"));
  onLanguageChange(draw);
  draw();
}

const shownTitle = (chat) => chat.titel || t("chats.untitled");
const openChat = () => list.find((c) => c.id === current);

// Every word of the row, in the page's language (again after a language change).
function draw() {
  if (!root) return;
  root.setAttribute("aria-label", t("chats.group", { name: shown.name }));
  el.labelText.textContent = t("chats.label");
  el.create.textContent = t("chats.new");
  el.rename.textContent = t("chats.rename");
  el.remove.textContent = t("chats.delete");
  el.exports.setAttribute("aria-label", t("chats.export"));
  el.markdown.textContent = t("chats.exportMarkdown");
  el.json.textContent = t("chats.exportJson");
  el.titleLabel.textContent = t("chats.renameLabel");
  el.save.textContent = t("chats.save");
  el.cancelRename.textContent = t("chats.cancel");
  el.yes.textContent = t("chats.deleteConfirm");
  el.no.textContent = t("chats.cancel");
  const chat = openChat();
  if (chat) el.question.textContent = t("chats.confirmDelete", { title: shownTitle(chat), name: shown.name });
  el.picker.replaceChildren(...list.map((c) => {
    const when = new Date(c.zuletzt_am || c.erstellt_am);
    return make("option", { value: c.id }, t("chats.option", { title: shownTitle(c), time: formatDateTime(when) }));
  }));
  if (current) el.picker.value = current;
  const none = !list.length;
  for (const button of [el.rename, el.remove, el.markdown, el.json]) button.disabled = none;
}

function say(text) { el.status.textContent = text; }

// The list of the character's chats from the server (the open one marked there).
export async function refresh() {
  if (!shown.id) return;
  const character = shown.id;
  const page = await get(`/chats?character_id=${enc(character)}`);
  if (character !== shown.id) return;
  const named = new Map(list.map((c) => [c.id, c.titel]));
  // a turn is written a moment after its answer: keep the first words noted meanwhile
  for (const c of page.chats) if (!c.titel && !c.turns && named.get(c.id)) c.titel = named.get(c.id);
  list = page.chats;
  current = page.aktuell;
  const opened = openChat();
  if (opened && !opened.titel && early) opened.titel = early; // sent before the list came
  early = null;
  draw();
}

// Another character: its chats, and its open chat shown (null: the chats could not be read,
// the page shows the character's whole history as before).
export async function setCharacter(id, name) {
  if (shown.id !== id) { // the same character again keeps the first words noted meanwhile
    if (shown.id) early = null; // (before the first character: a message sent already)
    list = [];
    current = null;
  }
  shown = { id, name: name || id };
  endRename();
  endDelete();
  say("");
  try {
    await refresh();
  } catch (err) {
    draw();
    say(t("chats.failed", { reason: err.message }));
    return onOpen(null);
  }
  return onOpen(current);
}

// The shown character's name changed (the list came later than the choice).
export function setName(name) {
  shown.name = name || shown.id;
  draw();
}

// The first words of a message, as the server names an unnamed chat (store/chats.py).
export function firstWords(text) {
  const words = text.replace(/\s+/g, " ").trim().split(" ");
  let title = words.slice(0, 6).join(" ");
  if (title.length > 48) title = title.slice(0, 47).trimEnd();
  return title && title !== words.join(" ") ? `${title}…` : title;
}

// The person sent a message: an unnamed, empty chat is called by its first words at once
// (the server's list says the same once the turn is written).
export function noteSent(text) {
  const chat = openChat();
  if (!chat && !list.length && !early) early = firstWords(text);
  if (!chat || chat.titel || chat.turns) return;
  chat.titel = firstWords(text);
  draw();
}

async function open(id) {
  if (id === current) return;
  endRename();
  endDelete();
  try {
    await call("POST", `/chats/${enc(id)}/open`);
    current = id;
    say("");
    draw();
    await onOpen(id);
  } catch (err) {
    el.picker.value = current;
    say(t("chats.failed", { reason: err.message }));
  }
}

async function create() {
  endRename();
  endDelete();
  try {
    const chat = await call("POST", "/chats", { character_id: shown.id });
    current = chat.id;
    await refresh();
    say(t("chats.created", { name: shown.name }));
    await onOpen(chat.id);
    document.getElementById("input")?.focus();
  } catch (err) {
    say(t("chats.failed", { reason: err.message }));
  }
}

function startRename() {
  const chat = openChat();
  if (!chat) return;
  endDelete();
  el.title.value = chat.titel;
  el.title.removeAttribute("aria-invalid");
  el.form.hidden = false;
  el.title.focus();
  el.title.select();
}

function endRename() {
  if (!el.form || el.form.hidden) return;
  el.form.hidden = true;
  el.rename.focus();
}

async function rename() {
  try {
    await call("PATCH", `/chats/${enc(current)}`, { titel: el.title.value.trim() || null });
    el.form.hidden = true;
    await refresh();
    say(t("chats.renamed"));
    el.picker.focus();
  } catch (err) {
    el.title.setAttribute("aria-invalid", "true");
    say(t("chats.failed", { reason: err.message }));
  }
}

function askDelete() {
  if (!openChat()) return;
  endRename();
  draw();
  el.confirm.hidden = false;
  el.no.focus();
}

function endDelete() {
  if (!el.confirm || el.confirm.hidden) return;
  el.confirm.hidden = true;
  el.remove.focus();
}

async function remove() {
  try {
    const done = await call("DELETE", `/chats/${enc(current)}`);
    el.confirm.hidden = true;
    current = done.aktuell;
    await refresh();
    say(t("chats.deleted"));
    el.picker.focus();
    await onOpen(current);
  } catch (err) {
    say(t("chats.failed", { reason: err.message }));
  }
}

// The open chat as a file: fetched with the token, handed to the browser as a download.
async function download(format) {
  const chat = openChat();
  if (!chat) return;
  const params = new URLSearchParams({ format, sprache: language() });
  try {
    const res = await fetch(`/chats/${enc(chat.id)}/export?${params}`, {
      headers: { Authorization: `Bearer ${session.token}` },
    });
    if (!res.ok) {
      const data = await res.json().catch(() => null);
      throw new Error((data && data.detail && (data.detail.meldung || data.detail.fehler)) || String(res.status));
    }
    const safe = (shownTitle(chat).replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "") || "chat").slice(0, 60);
    const file = `${safe}.${format}`;
    const url = URL.createObjectURL(await res.blob());
    const link = make("a", { href: url, download: file });
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    say(t("chats.exported", { file }));
  } catch (err) {
    say(t("chats.failed", { reason: err.message }));
  }
}
