// The memory panel: short-term entries, long-term nodes, goals and both profiles of the
// current pair (GET /memory/{character}/...), reloaded after every answer. Each entry reads
// as a sentence with why she remembers it ("Wichtig, weil es dich betrifft.", memory_why.js)
// and when; the raw figures (salience, weights, retrievals, themes, ids) show only behind
// the panel's "Details" switch. The search box filters what is shown, the search button asks
// the server's one search (a library hit opens its passage with the passages around it).
// Short- and long-term entries can be corrected in place (PATCH) or forgotten (DELETE);
// goals and profiles are distilled again from the memory, so they are shown, not edited.
"use strict";

import { call, enc, get } from "./api.js";
import { formatNumber, locale, onLanguageChange, t } from "./i18n.js";
import { editButton, editInline, editing } from "./inline_edit.js";
import { longTermWeight, shortTermWeight, why } from "./memory_why.js";
import { detailsShown, detailsSwitch } from "./panel_details.js";

let root = null;
let character = "";
let data = null;
let name = "Nova";

function item(text, detail, why) {
  const li = document.createElement("li");
  const main = document.createElement("span");
  main.className = "text";
  main.textContent = text;
  li.append(main);
  if (why) {
    const line = document.createElement("small");
    line.className = "why";
    line.textContent = why;
    li.append(line);
  }
  if (detail && (!why || detailsShown(root))) {
    const small = document.createElement("small");
    small.className = why ? "raw" : "";
    small.textContent = ` ${detail}`;
    li.append(small);
  }
  return li;
}

const status = (text) => { root.querySelector("[data-role=status]").textContent = text; };

// A button that forgets one entry (DELETE /memory/{character}/{layer}/{key or id}).
function forgetButton(row) {
  const btn = document.createElement("button");
  btn.type = "button";
  btn.className = "small";
  btn.textContent = t("panels.memory.forget");
  btn.setAttribute("aria-label", t("panels.memory.forgetThis", { text: row.text }));
  btn.addEventListener("click", async () => {
    try {
      await call("DELETE", `/memory/${enc(character)}/${row.layer}/${enc(row.key)}`);
      await refresh();
      status(t("panels.memory.forgotten"));
    } catch (err) {
      status(t("panels.memory.notForgotten", { reason: err.message }));
    }
  });
  return btn;
}

// Correcting an entry in place: PATCH with the new text, then the lists reload.
function correctButton(li, row) {
  let saved = false;
  return editButton(row.text, () => editInline(li, {
    label: t("panels.memory.correctThis", { text: row.text }),
    fields: [{ name: "inhalt", label: t("panels.memory.correctField"), value: row.text, maxLength: 2000 }],
    save: async ({ inhalt }) => {
      await call("PATCH", `/memory/${enc(character)}/${row.layer}/${enc(row.key)}`, { inhalt });
      saved = true;
    },
    onClose: async () => {
      if (!saved) return;
      await refresh();
      status(t("panels.memory.corrected"));
    },
  }));
}

function fill(role, rows, empty) {
  const list = root.querySelector(`[data-role=${role}]`);
  const query = root.querySelector("input[type=search]").value.trim().toLowerCase();
  const shown = rows.filter((r) => !query || r.text.toLowerCase().includes(query));
  list.replaceChildren(...shown.map((r) => {
    const li = item(r.text, r.detail, r.why);
    if (r.key) {
      li.dataset.key = String(r.key);
      if (r.corrected) {
        const mark = document.createElement("span");
        mark.className = "mark";
        mark.textContent = t("panels.memory.correctedMark");
        li.append(" ", mark);
      }
      li.append(correctButton(li, r), forgetButton(r));
    }
    return li;
  }));
  if (!shown.length) list.append(item(query ? t("panels.memory.noMatch") : empty));
  list.dataset.count = String(shown.length);
}

const pct = (v) => (typeof v === "number" ? `${formatNumber(Math.round(v * 100))} %` : "–");

// "vor 5 Minuten" / "5 minutes ago": when an entry was made (epoch seconds or ISO text).
const UNITS = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400], ["hour", 3600], ["minute", 60]];
function ago(when) {
  const ms = typeof when === "number" ? when * 1000 : Date.parse(when);
  if (!Number.isFinite(ms)) return "";
  const seconds = (ms - Date.now()) / 1000;
  const words = new Intl.RelativeTimeFormat(locale(), { numeric: "auto" });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return words.format(Math.round(seconds / size), unit);
  }
  return t("panels.memory.justNow");
}

const joined = (...parts) => parts.filter(Boolean).join(" · ");
const themes = (list) => (list && list.length ? t("panels.memory.themes", { themes: list.join(", ") }) : "");

function render() {
  if (!root || !data || editing()) return;
  fill("short_term", data.short.map((e) => ({
    key: e.key, layer: "short_term", corrected: Boolean(e.korrigiert_am), text: e.inhalt,
    why: joined(why(shortTermWeight(e.salienz), e, name), ago(e.erstellt_am)),
    detail: joined(t("panels.memory.salience", { value: pct(e.salienz) }),
      t("panels.memory.frequency", { count: e.haeufigkeit }), themes(e.themen),
      e.emotion, e.dimension, e.beobachter),
  })), t("panels.memory.emptyShort"));
  fill("long_term", data.long.map((n) => ({
    key: n.id, layer: "long_term", corrected: Boolean(n.korrigiert_am), text: n.inhalt,
    why: joined(why(longTermWeight(n.gewicht_decay), n, name), ago(n.erstellt_am)),
    detail: joined(t("panels.memory.weight", { value: pct(n.gewicht_decay) }),
      t("panels.memory.recalls", { count: n.abrufe }),
      t("panels.memory.frequency", { count: n.haeufigkeit }), themes(n.themen),
      n.emotion, n.dimension, n.beobachter),
  })), t("panels.memory.emptyLong"));
  fill("goals", data.goals.map((g) => {
    const m = typeof g.motivation_jetzt === "number" ? g.motivation_jetzt : 0;
    const key = m >= 0.7 ? "panels.memory.goal.strong" : m >= 0.3 ? "panels.memory.goal.some" : "panels.memory.goal.resting";
    return { text: g.zielsatz, why: t(key, { name }), detail: t("panels.memory.motivation", { value: pct(g.motivation_jetzt) }) };
  }), t("panels.memory.emptyGoals"));
  const profiles = [];
  for (const [who, key] of [["user", "panels.memory.aboutYou"], ["character", "panels.memory.aboutHer"]]) {
    const p = data.profiles[who];
    if (!p) continue;
    for (const [layer, text] of Object.entries(p)) {
      if (typeof text === "string" && text.trim() && !/_am$|_id$/.test(layer)) {
        profiles.push({ text, why: t(key, { name }), detail: layer });
      }
    }
  }
  fill("profiles", profiles, t("panels.memory.emptyProfiles"));
}

export async function refresh() {
  if (!root || !character || editing()) return;
  const base = `/memory/${enc(character)}`;
  try {
    const [short, long, goals, profiles] = await Promise.all([
      get(`${base}/short_term`), get(`${base}/long_term?limit=50`),
      get(`${base}/goals`), get(`${base}/profiles`),
    ]);
    data = { short: short.entries, long: long.nodes, goals: goals.goals, profiles };
    root.querySelector("[data-role=status]").textContent = "";
    render();
    root.dataset.loaded = String(Date.now());
  } catch (err) {
    root.querySelector("[data-role=status]").textContent = t("panels.memory.notLoaded", { reason: err.message });
  }
}

// How a library passage is cited: "vertrag.pdf, S. 2, Z. 1–2" (as the server's label).
export function passageLabel(src) {
  const parts = [String(src.file || "").split("/").pop()];
  if (src.page !== null && src.page !== undefined) parts.push(t("panels.memory.page", { page: src.page }));
  if (src.heading) parts.push(src.heading);
  const [from, to] = src.lines || [];
  if (from !== undefined) parts.push(t("panels.memory.lines", { from, to }));
  return parts.join(", ");
}

const LAYERS = ["archiv", "kzg", "lzg", "library"];
const layerName = (layer) => (LAYERS.includes(layer) ? t(`panels.memory.layer.${layer}`) : layer);

const score = (hit) => Math.round((hit.score || 0) * 100) / 100;

// A hit of the search: a library passage names its file and place and opens on a click;
// an imported turn names who said it.
function hitItem(hit) {
  if (hit.layer !== "library" || !hit.sources.length) {
    const who = hit.speaker_name ? ` · ${hit.speaker_name}` : "";
    return item(hit.text, `${layerName(hit.layer)}${who} · ${score(hit)}`);
  }
  const li = document.createElement("li");
  li.dataset.layer = "library";
  li.dataset.testid = "library-hit";
  const open = document.createElement("button");
  open.type = "button";
  open.className = "link";
  open.textContent = passageLabel(hit.sources[0]);
  open.setAttribute("aria-label", t("panels.memory.openPassage", { label: open.textContent }));
  open.addEventListener("click", () => openPassage(hit.id));
  const text = document.createElement("span");
  text.textContent = ` ${hit.text}`;
  const small = document.createElement("small");
  small.textContent = ` ${t("panels.memory.layer.library")} · ${score(hit)}`;
  li.append(open, text, small);
  return li;
}

// The passage with its neighbours in the file (GET /library/passages/{id}).
async function openPassage(id) {
  const box = root.querySelector("[data-role=passage]");
  try {
    const p = await get(`/library/passages/${enc(id)}`);
    const title = document.createElement("h4");
    title.textContent = `${p.label} — ${p.datei}`;
    const para = (q, cls) => {
      const el = document.createElement("p");
      el.className = cls;
      el.textContent = q.text;
      el.title = q.label;
      return el;
    };
    const close = document.createElement("button");
    close.type = "button";
    close.className = "small";
    close.textContent = t("panels.memory.close");
    close.addEventListener("click", () => { box.hidden = true; box.replaceChildren(); });
    box.replaceChildren(title, ...p.vorher.map((q) => para(q, "around")),
      para(p, "chosen"), ...p.nachher.map((q) => para(q, "around")), close);
    box.querySelector(".chosen").dataset.testid = "passage-chosen";
    box.hidden = false;
    box.focus();
  } catch (err) {
    box.replaceChildren(item(t("panels.memory.passageFailed", { reason: err.message })));
    box.hidden = false;
  }
}

// The server's hybrid search (archive, short- and long-term memory and library, fused).
async function search(query) {
  const list = root.querySelector("[data-role=hits]");
  try {
    const found = await get(`/memory/${enc(character)}/search?q=${enc(query)}&limit=10`);
    list.replaceChildren(...found.hits.map(hitItem));
    if (!found.hits.length) list.append(item(t("panels.memory.nothingFound")));
    list.dataset.count = String(found.hits.length);
  } catch (err) {
    list.replaceChildren(item(t("panels.memory.searchFailed", { reason: err.message })));
  }
}

export function mount(element, characterId) {
  root = element;
  character = characterId;
  detailsSwitch(root, render);
  onLanguageChange(render);
  const input = root.querySelector("input[type=search]");
  input.addEventListener("input", render);
  root.querySelector("[data-role=search-form]").addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (input.value.trim()) search(input.value.trim());
  });
}

/** The character's name as the page shows it (the picker's option). */
export function setCharacterName(characterName) {
  name = characterName || name;
  render();
}

export function setCharacter(characterId) {
  character = characterId;
  data = null;
  refresh();
}
