// The memory panel: short-term entries, long-term nodes, goals and both profiles of the
// current pair (GET /memory/{character}/...), reloaded after every answer; the search box
// filters what is shown, the search button asks the server's one search (a library hit opens
// its passage with the passages around it). Short- and long-term entries can be corrected in place (PATCH) or
// forgotten (DELETE); goals and profiles are distilled again from the memory, so they are
// shown, not edited.
"use strict";

import { call, enc, get } from "./api.js";
import { editButton, editInline, editing } from "./inline_edit.js";

let root = null;
let character = "";
let data = null;

function item(text, detail) {
  const li = document.createElement("li");
  const main = document.createElement("span");
  main.textContent = text;
  li.append(main);
  if (detail) {
    const small = document.createElement("small");
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
  btn.textContent = "Vergessen";
  btn.setAttribute("aria-label", `Vergessen: ${row.text}`);
  btn.addEventListener("click", async () => {
    try {
      await call("DELETE", `/memory/${enc(character)}/${row.layer}/${enc(row.key)}`);
      await refresh();
      status("vergessen");
    } catch (err) {
      status(`nicht vergessen: ${err.message}`);
    }
  });
  return btn;
}

// Correcting an entry in place: PATCH with the new text, then the lists reload.
function correctButton(li, row) {
  let saved = false;
  return editButton(row.text, () => editInline(li, {
    label: `Korrigieren: ${row.text}`,
    fields: [{ name: "inhalt", label: "Richtiger Text", value: row.text, maxLength: 2000 }],
    save: async ({ inhalt }) => {
      await call("PATCH", `/memory/${enc(character)}/${row.layer}/${enc(row.key)}`, { inhalt });
      saved = true;
    },
    onClose: async () => {
      if (!saved) return;
      await refresh();
      status("korrigiert");
    },
  }));
}

function fill(role, rows, empty) {
  const list = root.querySelector(`[data-role=${role}]`);
  const query = root.querySelector("input[type=search]").value.trim().toLowerCase();
  const shown = rows.filter((r) => !query || r.text.toLowerCase().includes(query));
  list.replaceChildren(...shown.map((r) => {
    const li = item(r.text, r.detail);
    if (r.key) {
      li.dataset.key = String(r.key);
      if (r.corrected) {
        const mark = document.createElement("span");
        mark.className = "mark";
        mark.textContent = "korrigiert";
        li.append(" ", mark);
      }
      li.append(correctButton(li, r), forgetButton(r));
    }
    return li;
  }));
  if (!shown.length) list.append(item(query ? "keine Treffer" : empty));
  list.dataset.count = String(shown.length);
}

const pct = (v) => (typeof v === "number" ? `${Math.round(v * 100)} %` : "–");

function render() {
  if (!root || !data || editing()) return;
  fill("short_term", data.short.map((e) => ({
    key: e.key, layer: "short_term", corrected: Boolean(e.korrigiert_am),
    text: e.inhalt, detail: `Salienz ${pct(e.salienz)}${e.themen.length ? " · " + e.themen.join(", ") : ""}`,
  })), "nichts im Kurzzeitgedächtnis");
  fill("long_term", data.long.map((n) => ({
    key: n.id, layer: "long_term", corrected: Boolean(n.korrigiert_am),
    text: n.inhalt, detail: `Gewicht ${pct(n.gewicht_decay)} · ${n.abrufe} Abrufe`,
  })), "nichts im Langzeitgedächtnis");
  fill("goals", data.goals.map((g) => ({
    text: g.zielsatz, detail: `Motivation ${pct(g.motivation_jetzt)}`,
  })), "keine Ziele");
  const profiles = [];
  for (const [who, label] of [["user", "Über dich"], ["character", "Über sich"]]) {
    const p = data.profiles[who];
    if (!p) continue;
    for (const [layer, text] of Object.entries(p)) {
      if (typeof text === "string" && text.trim() && !/_am$|_id$/.test(layer)) {
        profiles.push({ text, detail: `${label} · ${layer}` });
      }
    }
  }
  fill("profiles", profiles, "noch keine Profile");
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
    root.querySelector("[data-role=status]").textContent = `nicht geladen: ${err.message}`;
  }
}

// How a library passage is cited: "vertrag.pdf, S. 2, Z. 1–2" (as the server's label).
export function passageLabel(src) {
  const parts = [String(src.file || "").split("/").pop()];
  if (src.page !== null && src.page !== undefined) parts.push(`S. ${src.page}`);
  if (src.heading) parts.push(src.heading);
  const [from, to] = src.lines || [];
  if (from !== undefined) parts.push(`Z. ${from}–${to}`);
  return parts.join(", ");
}

const score = (hit) => Math.round((hit.score || 0) * 100) / 100;

// A hit of the search: a library passage names its file and place and opens on a click;
// an imported turn names who said it.
function hitItem(hit) {
  if (hit.layer !== "library" || !hit.sources.length) {
    const who = hit.speaker_name ? ` · ${hit.speaker_name}` : "";
    return item(hit.text, `${hit.layer}${who} · ${score(hit)}`);
  }
  const li = document.createElement("li");
  li.dataset.layer = "library";
  li.dataset.testid = "library-hit";
  const open = document.createElement("button");
  open.type = "button";
  open.className = "link";
  open.textContent = passageLabel(hit.sources[0]);
  open.setAttribute("aria-label", `Stelle öffnen: ${open.textContent}`);
  open.addEventListener("click", () => openPassage(hit.id));
  const text = document.createElement("span");
  text.textContent = ` ${hit.text}`;
  const small = document.createElement("small");
  small.textContent = ` Bibliothek · ${score(hit)}`;
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
    close.textContent = "Schließen";
    close.addEventListener("click", () => { box.hidden = true; box.replaceChildren(); });
    box.replaceChildren(title, ...p.vorher.map((q) => para(q, "around")),
      para(p, "chosen"), ...p.nachher.map((q) => para(q, "around")), close);
    box.querySelector(".chosen").dataset.testid = "passage-chosen";
    box.hidden = false;
    box.focus();
  } catch (err) {
    box.replaceChildren(item(`Stelle nicht geöffnet: ${err.message}`));
    box.hidden = false;
  }
}

// The server's hybrid search (archive, short- and long-term memory and library, fused).
async function search(query) {
  const list = root.querySelector("[data-role=hits]");
  try {
    const found = await get(`/memory/${enc(character)}/search?q=${enc(query)}&limit=10`);
    list.replaceChildren(...found.hits.map(hitItem));
    if (!found.hits.length) list.append(item("nichts gefunden"));
    list.dataset.count = String(found.hits.length);
  } catch (err) {
    list.replaceChildren(item(`Suche fehlgeschlagen: ${err.message}`));
  }
}

export function mount(element, characterId) {
  root = element;
  character = characterId;
  const input = root.querySelector("input[type=search]");
  input.addEventListener("input", render);
  root.querySelector("[data-role=search-form]").addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (input.value.trim()) search(input.value.trim());
  });
}

export function setCharacter(characterId) {
  character = characterId;
  data = null;
  refresh();
}
