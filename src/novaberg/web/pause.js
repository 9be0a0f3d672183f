// Pausing the shown character for this person (POST /characters/{id}/pause and /activate;
// docs/behaviour/web.md#the-page). A paused character answers nothing: what the person
// writes is stored and waits, and activating answers all of it at once. The switch next to
// the picker says which action it takes; a banner says the character rests.
"use strict";

import { call, enc } from "./api.js";

let button = null;
let banner = null;
const paused = new Set();
let shown = { id: "nova", name: "Nova" };

export function mount(toggle, notice) {
  button = toggle;
  banner = notice;
  button.addEventListener("click", flip);
}

// The characters as GET /characters listed them (`aktiv` false: paused for this person).
export function know(characters) {
  paused.clear();
  for (const c of characters) if (c.aktiv === false) paused.add(c.character_id);
  draw();
}

export function show(id, name) {
  shown = { id, name: name || id };
  draw();
}

export const isPaused = (id) => paused.has(id);

function draw() {
  if (!button) return;
  const resting = paused.has(shown.id);
  button.textContent = resting ? `${shown.name} aktivieren` : `${shown.name} pausieren`;
  button.setAttribute("aria-pressed", String(resting));
  banner.hidden = !resting;
  banner.textContent = resting
    ? `${shown.name} ist pausiert: deine Nachrichten werden gespeichert und beantwortet, ` +
      "sobald du sie wieder aktivierst."
    : "";
}

async function flip() {
  const id = shown.id;
  const resting = paused.has(id);
  button.disabled = true;
  try {
    const done = await call("POST", `/characters/${enc(id)}/${resting ? "activate" : "pause"}`);
    if (done.aktiv) paused.delete(id);
    else paused.add(id);
    draw();
    if (done.aufgegriffen) {
      banner.hidden = false;
      banner.textContent = `${shown.name} ist wieder da und antwortet auf ${done.aufgegriffen} ` +
        (done.aufgegriffen === 1 ? "wartende Nachricht." : "wartende Nachrichten.");
    }
  } catch (err) {
    banner.hidden = false;
    banner.textContent = `Nicht geändert: ${err.message}`;
  } finally {
    button.disabled = false;
  }
}
