// The settings panel: time zone and the model in use (GET /page/settings), the banner
// shown while the bundled demo model answers, and the person's impulse limits for the
// current character (GET/PATCH /settings): on/off, at most K a day, quiet hours, zone —
// and the page's language (Deutsch, English or the browser's; stored in this browser and
// applied at once, docs/behaviour/web.md#language).
"use strict";

import { enc, get, headers } from "./api.js";
import { chosen, language, setLanguage, setText, unmark } from "./i18n.js";

const LABELS = {
  impulse: "settings.impulses",
  pro_tag: "settings.perDay",
  ruhezeit: "settings.quietHours",
  zeitzone: "settings.yourZone",
};

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

function status(key) {
  const line = form.querySelector("[data-role=impulse-status]");
  if (key) setText(line, key);
  else unmark(line).textContent = "";
}

// The form's complaints: one `{key, vars}` each (joined by " · "), none to clear.
function showErrors(lines, fields = []) {
  const box = form.querySelector("[data-role=impulse-error]");
  box.replaceChildren(...lines.flatMap((line, i) => [
    i ? " · " : "",
    setText(document.createElement("span"), line.key, line.vars),
  ]));
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

// A field's complaint in words (the API's own are English and technical): the quiet
// hours want HH:MM-HH:MM, the number a whole one from 0 to 50, the zone a known name.
const EXPECTED = {
  ruhezeit: "settings.expectHours",
  pro_tag: "settings.expectNumber",
  zeitzone: "settings.expectZone",
};
function explain(field) {
  return EXPECTED[field] ? { key: EXPECTED[field] } : { key: "settings.invalid" };
}

// The API's 422: FastAPI's list of {loc, msg} (a field each) or our {fehler, detail}.
function problems(status, body) {
  const detail = body && body.detail;
  if (Array.isArray(detail)) {
    const fields = detail.map((d) => String((d.loc || []).at(-1) || ""));
    const lines = detail.map((d, i) => ({
      key: "settings.fieldProblem",
      vars: { field: { key: LABELS[fields[i]] || "settings.input" }, problem: explain(fields[i]) },
    }));
    return { lines, fields };
  }
  const text = (detail && (detail.meldung || detail.detail || detail.fehler)) || String(status);
  return { lines: [{ key: "settings.notSavedBecause", vars: { error: text } }], fields: [] };
}

async function save() {
  const el = form.elements;
  const changes = { character_id: character, impulse: el.impulse.checked, ruhezeit: el.ruhezeit.value.trim() };
  const perDay = el.pro_tag.value.trim();
  if (perDay) changes.pro_tag = Number(perDay);
  else if (el.pro_tag.validity.badInput) changes.pro_tag = el.pro_tag.value; // refused below
  const zone = el.zeitzone.value.trim();
  if (zone) changes.zeitzone = zone;
  status("settings.saving");
  const res = await fetch("/settings", {
    method: "PATCH",
    headers: headers({ "Content-Type": "application/json" }),
    body: JSON.stringify(changes),
  });
  const body = await res.json().catch(() => null);
  if (!res.ok) {
    const found = problems(res.status, body);
    showErrors(found.lines, found.fields);
    status("settings.notSaved");
    return;
  }
  showErrors([]);
  fill(body);
  status("settings.saved");
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
      showErrors([{ key: "settings.notSavedBecause", vars: { error: err.message } }]);
      status("settings.notSaved");
    });
  });
}

// Show the impulse settings of `id` (each character has its own).
export async function setCharacter(id) {
  character = id;
  if (!form) return;
  showErrors([]);
  status(null);
  try {
    const s = await get(`/settings?character_id=${enc(id)}`);
    if (id === character) fill(s);
  } catch (err) {
    showErrors([{ key: "settings.impulsesNotLoaded", vars: { error: err.message } }]);
  }
}

// The language choice: "" follows the browser, "de"/"en" is kept in this browser.
export function mountLanguage(panel) {
  const choice = panel.querySelector("[data-role=language]");
  if (!choice) return;
  choice.value = chosen() ? language() : "";
  choice.addEventListener("change", () => setLanguage(choice.value || null));
}
