// The emotion panel: what both actors felt over the conversation, as a radar of the
// wheel's sectors (recent turns) and a timeline of arousal. Fed by the history on load
// and by every `character_response` after.
"use strict";

import { radar, timeline } from "./charts.js";
import { characterName } from "./character.js";

const RECENT = 12; // observations per actor the radar sums over
const ACTORS = [
  { key: "nova", get label() { return characterName(); } }, // the shown character
  { key: "user", label: "Du" },
];

const seen = { nova: [], user: [] };
let wheel = null; // {emotion: sector}; sector 0 = neutral (no axis)
let sectors = 8;
let root = null;

const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

export function setWheel(map, count) {
  wheel = map;
  sectors = count;
  draw();
}

export function mount(element) {
  root = element;
  draw();
}

export function reset() {
  seen.nova = [];
  seen.user = [];
  draw();
}

// One turn's emotions: {t, emotion, arousal, user_emotion, user_arousal, ...}.
export function observe(turn, redraw = true) {
  const t = num(turn.t) ?? Date.now() / 1000;
  if (turn.emotion) seen.nova.push({ t, emotion: turn.emotion, v: num(turn.arousal) });
  if (turn.user_emotion) seen.user.push({ t, emotion: turn.user_emotion, v: num(turn.user_arousal) });
  if (redraw) draw();
  if (turn.emotion) {
    const cap = root && root.querySelector("[data-role=now]");
    if (cap) {
      const parts = [`${characterName()}: ${turn.emotion}`];
      if (turn.user_emotion) parts.push(`du: ${turn.user_emotion}`);
      if (turn.emotions_vektor) parts.push(`Verlauf: ${turn.emotions_vektor}`);
      cap.textContent = parts.join(" · ");
    }
  }
}

export function draw() {
  if (!root) return;
  const pics = root.querySelector("[data-role=pictures]");
  pics.replaceChildren();
  if (!wheel) return;
  const labels = [];
  for (let s = 1; s <= sectors; s++) {
    labels.push(Object.keys(wheel).find((name) => wheel[name] === s) || String(s));
  }
  const values = {};
  for (const actor of ACTORS) {
    const sums = new Array(sectors).fill(0);
    for (const o of seen[actor.key].slice(-RECENT)) {
      const s = wheel[o.emotion];
      if (s) sums[s - 1] += o.v ?? 0.5;
    }
    const top = Math.max(...sums, 0);
    values[actor.key] = sums.map((v) => (top ? v / top : 0));
  }
  pics.append(radar(labels, values, ACTORS));
  const series = {};
  for (const actor of ACTORS) series[actor.key] = seen[actor.key].map((o) => ({ t: o.t, v: o.v }));
  pics.append(timeline(series, ACTORS));
  root.dataset.observations = String(seen.nova.length + seen.user.length);
}
