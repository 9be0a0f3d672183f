// Pausing the shown character for this person (POST /characters/{id}/pause and /activate;
// docs/behaviour/web.md#the-page). A paused character answers nothing: what the person
// writes is stored and waits, and activating answers all of it at once. The switch next to
// the picker says which action it takes; a banner says the character rests.
"use strict";

import { call, enc } from "./api.js";
import { setText, unmark } from "./i18n.js";

let button = null;
let banner = null;
const paused = new Set();
let shown = { id: "nova", name: "Nova" };

export function mount(toggle, notice) {
  button = toggle;
  banner = notice;
  button.addEventListener("click", flip);
  draw();
}

let flips = 0; // answered flips so far
const flippedAt = new Map(); // character id -> `flips` after its last answered flip

/** What `know` needs to tell a list asked for now from a flip answered later. */
export const asked = () => flips;

// The characters as GET /characters listed them (`aktiv` false: paused for this person),
// the list asked for when `asked()` said `since`. A slow list can answer after the person
// flipped the switch, with the state from before: the flip's answer is newer, it stays.
export function know(characters, since = flips) {
  const kept = new Set([...paused].filter((id) => (flippedAt.get(id) ?? 0) > since));
  const fresh = [...flippedAt].filter(([, at]) => at > since).map(([id]) => id);
  paused.clear();
  for (const c of characters) {
    if (fresh.includes(c.character_id)) continue;
    if (c.aktiv === false) paused.add(c.character_id);
  }
  for (const id of kept) paused.add(id);
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
  setText(button, resting ? "pause.activate" : "pause.pause", { name: shown.name });
  button.setAttribute("aria-pressed", String(resting));
  banner.hidden = !resting;
  if (resting) setText(banner, "pause.resting", { name: shown.name });
  else unmark(banner).textContent = "";
}

async function flip() {
  const id = shown.id;
  const resting = paused.has(id);
  button.disabled = true;
  try {
    const done = await call("POST", `/characters/${enc(id)}/${resting ? "activate" : "pause"}`);
    if (done.aktiv) paused.delete(id);
    else paused.add(id);
    flips += 1;
    flippedAt.set(id, flips);
    draw();
    if (done.aufgegriffen) {
      banner.hidden = false;
      const key = done.aufgegriffen === 1 ? "pause.backOne" : "pause.backMany";
      setText(banner, key, { name: shown.name, count: done.aufgegriffen });
    }
  } catch (err) {
    banner.hidden = false;
    setText(banner, "pause.notChanged", { error: err.message });
  } finally {
    button.disabled = false;
  }
}
