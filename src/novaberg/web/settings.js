// The settings panel: time zone and the model in use (GET /page/settings), the banner
// shown while the bundled demo model answers, and the person's impulse limits for the
// current character (GET/PATCH /settings): on/off, at most K a day, quiet hours, zone.
"use strict";

import { enc, get, session } from "./api.js";

const LABELS = { impulse: "Impulse", pro_tag: "Höchstens pro Tag", ruhezeit: "Ruhezeit", zeitzone: "Zeitzone" };

let form = null;
let character = "nova";

export async function load(panel, banner) {
  const s = await get("/page/settings");
  panel.querySelector("[data-role=timezone]").textContent = s.zeitzone;
  panel.querySelector("[data-role=model]").textContent = `${s.modell} (${s.backend})`;
  banner.hidden = !s.demo_modell;
  banner.querySelector("code").textContent = s.demo_hinweis;
  return s;
}

function status(text) {
  form.querySelector("[data-role=impulse-status]").textContent = text;
}

function showErrors(lines, fields = []) {
  const box = form.querySelector("[data-role=impulse-error]");
  box.textContent = lines.join(" · ");
  box.hidden = !lines.length;
  for (const input of form.elements) {
    if (!input.name) continue;
    if (fields.includes(input.name)) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
}

function fill(s) {
  form.elements.impulse.checked = Boolean(s.impulse);
  form.elements.pro_tag.value = String(s.pro_tag);
  form.elements.ruhezeit.value = s.ruhezeit || "";
  form.elements.zeitzone.value = s.zeitzone || "";
  form.dataset.character = s.character_id;
}

// A field's complaint in words: a pattern means the quiet hours' HH:MM-HH:MM.
function explain(d) {
  if (d.type === "string_pattern_mismatch") return "erwartet HH:MM-HH:MM, z. B. 22:00-07:00";
  return d.msg;
}

// The API's 422: FastAPI's list of {loc, msg} (a field each) or our {fehler, detail}.
function problems(status, body) {
  const detail = body && body.detail;
  if (Array.isArray(detail)) {
    const fields = detail.map((d) => String((d.loc || []).at(-1) || ""));
    const lines = detail.map((d, i) => `${LABELS[fields[i]] || fields[i] || "Eingabe"}: ${explain(d)}`);
    return { lines, fields };
  }
  const text = (detail && (detail.detail || detail.fehler)) || `Fehler ${status}`;
  return { lines: [`nicht gespeichert: ${text}`], fields: [] };
}

async function save() {
  const el = form.elements;
  const changes = { character_id: character, impulse: el.impulse.checked, ruhezeit: el.ruhezeit.value.trim() };
  const perDay = el.pro_tag.value.trim();
  if (perDay) changes.pro_tag = Number(perDay);
  else if (el.pro_tag.validity.badInput) changes.pro_tag = el.pro_tag.value; // refused below
  const zone = el.zeitzone.value.trim();
  if (zone) changes.zeitzone = zone;
  status("speichere …");
  const res = await fetch("/settings", {
    method: "PATCH",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${session.token}` },
    body: JSON.stringify(changes),
  });
  const body = await res.json().catch(() => null);
  if (!res.ok) {
    const found = problems(res.status, body);
    showErrors(found.lines, found.fields);
    status("nicht gespeichert");
    return;
  }
  showErrors([]);
  fill(body);
  status("gespeichert");
}

export function mount(panel) {
  form = panel.querySelector("[data-role=impulse-form]");
  const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  panel.querySelector("#zone-list").replaceChildren(...zones.map((z) => {
    const o = document.createElement("option");
    o.value = z;
    return o;
  }));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    save().catch((err) => {
      showErrors([`nicht gespeichert: ${err.message}`]);
      status("nicht gespeichert");
    });
  });
}

// Show the impulse settings of `id` (each character has its own).
export async function setCharacter(id) {
  character = id;
  if (!form) return;
  showErrors([]);
  status("");
  try {
    const s = await get(`/settings?character_id=${enc(id)}`);
    if (id === character) fill(s);
  } catch (err) {
    showErrors([`Impulse nicht geladen: ${err.message}`]);
  }
}
