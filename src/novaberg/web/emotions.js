// The emotion panel: how the character feels right now in a sentence ("Nova ist gerade
// neugierig und etwas unsicher. Du wirkst froh."), a radar of the wheel's sectors (recent
// turns) whose axes name and mark the emotions of that sentence, and a timeline of arousal.
// Fed by the history on load and by every `character_response` after. Arousal figures and
// the mood's direction show behind the panel's "Details" switch.
"use strict";

import { radar, timeline } from "./charts.js";
import { direction, emotionName, feeling } from "./feelings.js";
import { formatNumber, onLanguageChange, t } from "./i18n.js";
import { detailsShown, detailsSwitch } from "./panel_details.js";

const RECENT = 12; // observations per actor the radar sums over
const SECOND_WINDOW = 5; // her last answers a second feeling of the sentence comes from
const SECOND_WEIGHT = 0.3; // weight a history entry needs to be named as the second feeling
const STRONG = 0.75; // arousal from which a feeling is "sehr"/"very"
const NEUTRAL = "neutral";

const seen = { nova: [], user: [] };
let latest = { nova: null, user: null }; // the newest answer's {emotion, v, history, vector}
let wheel = null; // {emotion: sector}; sector 0 = neutral (no axis)
let sectors = 8;
let root = null;
let name = "Nova";

const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

const actors = () => [
  { key: "nova", label: name },
  { key: "user", label: t("panels.emotions.you") },
];

export function setWheel(map, count) {
  wheel = map;
  sectors = count;
  draw();
}

/** The character's name as the page shows it (the picker's option). */
export function setCharacterName(characterName) {
  name = characterName || name;
  draw();
}

export function mount(element) {
  root = element;
  detailsSwitch(root, draw);
  onLanguageChange(draw);
  draw();
}

export function reset() {
  seen.nova = [];
  seen.user = [];
  latest = { nova: null, user: null };
  draw();
}

// One turn's emotions: {t, emotion, arousal, user_emotion, user_arousal,
// nova_emotions_verlauf, emotions_vektor, ...}.
export function observe(turn, redraw = true) {
  const t0 = num(turn.t) ?? Date.now() / 1000;
  if (turn.emotion) {
    const o = { t: t0, emotion: turn.emotion, v: num(turn.arousal) };
    seen.nova.push(o);
    latest.nova = {
      ...o,
      history: Array.isArray(turn.nova_emotions_verlauf) ? turn.nova_emotions_verlauf : null,
      vector: turn.emotions_vektor || null,
    };
  }
  if (turn.user_emotion) {
    const o = { t: t0, emotion: turn.user_emotion, v: num(turn.user_arousal) };
    seen.user.push(o);
    latest.user = o;
  }
  if (redraw) draw();
}

// A second feeling for the sentence: the heaviest other emotion of her weighted history
// when the answer brought one, else the strongest other one of her last few answers.
function secondFeeling(current) {
  const other = (e) => e && e !== current.emotion && e !== NEUTRAL;
  const history = current.history;
  if (history) {
    const hit = history.find((h) => other(h.emotion) && (num(h.gewicht) ?? 0) >= SECOND_WEIGHT);
    return hit ? hit.emotion : null;
  }
  const sums = new Map();
  for (const o of seen.nova.slice(-SECOND_WINDOW - 1, -1)) {
    if (other(o.emotion)) sums.set(o.emotion, (sums.get(o.emotion) ?? 0) + (o.v ?? 0.5));
  }
  let best = null;
  for (const [emotion, weight] of sums) if (!best || weight > best[1]) best = [emotion, weight];
  return best ? best[0] : null;
}

function feelingOf(o) {
  const word = feeling(o.emotion);
  return (o.v ?? 0) >= STRONG && o.emotion !== NEUTRAL ? t("panels.emotions.very", { feeling: word }) : word;
}

/** "Nova ist gerade neugierig und etwas unsicher. Du wirkst froh." */
export function sentence() {
  const nova = latest.nova;
  if (!nova) return t("panels.emotions.none");
  const parts = [];
  const second = secondFeeling(nova);
  parts.push(second
    ? t("panels.emotions.nowAnd", { name, feeling: feelingOf(nova), second: feeling(second) })
    : t("panels.emotions.now", { name, feeling: feelingOf(nova) }));
  if (latest.user) parts.push(t("panels.emotions.youSeem", { feeling: feelingOf(latest.user) }));
  return parts.join(" ");
}

// The raw side: arousal as a number and the direction of her mood.
function rawLines() {
  const lines = [];
  const figure = (v) => (v === null ? t("panels.emotions.unmeasured") : formatNumber(Math.round(v * 100) / 100));
  for (const actor of actors()) {
    const o = latest[actor.key];
    if (!o) continue;
    let line = t("panels.emotions.raw", { who: actor.label, emotion: emotionName(o.emotion), arousal: figure(o.v) });
    if (o.vector) line += ` · ${t("panels.emotions.direction", { direction: direction(o.vector) })}`;
    lines.push(line);
  }
  return lines;
}

// The wheel's axes: each sector is labelled with its intense emotion, except the sectors
// of the emotions named in the sentence, which carry those names and are marked.
function axes() {
  const names = []; // [actor key, emotion] of every emotion the sentence names
  if (latest.nova) {
    names.push(["nova", latest.nova.emotion]);
    const second = secondFeeling(latest.nova);
    if (second) names.push(["nova", second]);
  }
  if (latest.user) names.push(["user", latest.user.emotion]);
  const axis = (here) => ({
    label: [...new Set(here.map(([, e]) => emotionName(e)))].join(" · "),
    named: [...new Set(here.map(([key]) => key))],
    emotions: [...new Set(here.map(([, e]) => e))],
  });
  const list = [];
  for (let s = 1; s <= sectors; s++) {
    const here = names.filter(([, e]) => wheel[e] === s);
    if (here.length) list.push(axis(here));
    else {
      const intense = Object.keys(wheel).find((e) => wheel[e] === s);
      list.push({ label: emotionName(intense || String(s)), named: [], emotions: [] });
    }
  }
  const calm = names.filter(([, e]) => !wheel[e]);
  return { list, centre: calm.length ? axis(calm) : null };
}

function legend() {
  const box = root.querySelector(".legend");
  if (!box) return;
  const parts = [];
  for (const actor of actors()) {
    const key = document.createElement("span");
    key.className = `key ${actor.key}`;
    key.setAttribute("aria-hidden", "true");
    const label = document.createElement("span");
    label.dataset.actor = actor.key;
    label.textContent = actor.label;
    parts.push(key, label, " ");
  }
  box.replaceChildren(...parts);
}

export function draw() {
  if (!root) return;
  const now = root.querySelector("[data-role=now]");
  now.textContent = sentence();
  now.dataset.emotion = latest.nova ? latest.nova.emotion : "";
  now.dataset.userEmotion = latest.user ? latest.user.emotion : "";
  let raw = root.querySelector("[data-role=raw]");
  if (!raw) {
    raw = document.createElement("ul");
    raw.dataset.role = "raw";
    raw.className = "raw";
    now.after(raw);
  }
  raw.hidden = !detailsShown(root);
  raw.replaceChildren(...rawLines().map((line) => {
    const li = document.createElement("li");
    li.textContent = line;
    return li;
  }));
  legend();
  const pics = root.querySelector("[data-role=pictures]");
  pics.replaceChildren();
  root.dataset.observations = String(seen.nova.length + seen.user.length);
  if (!wheel) return;
  const who = actors();
  const values = {};
  const summary = [];
  for (const actor of who) {
    const sums = new Array(sectors).fill(0);
    for (const o of seen[actor.key].slice(-RECENT)) {
      const s = wheel[o.emotion];
      if (s) sums[s - 1] += o.v ?? 0.5;
    }
    const top = Math.max(...sums, 0);
    values[actor.key] = sums.map((v) => (top ? v / top : 0));
    const strongest = sums.map((v, i) => [v, i + 1]).filter(([v]) => v > 0)
      .sort((a, b) => b[0] - a[0]).slice(0, 2)
      .map(([, s]) => emotionName(Object.keys(wheel).find((e) => wheel[e] === s)));
    summary.push(`${actor.label}: ${strongest.length ? strongest.join(", ") : t("panels.emotions.nothingYet")}`);
  }
  const { list, centre } = axes();
  pics.append(radar(list, values, who, t("panels.chart.radar", { summary: summary.join("; ") }), centre));
  const series = {};
  const last = [];
  for (const actor of who) {
    series[actor.key] = seen[actor.key].map((o) => ({ t: o.t, v: o.v }));
    const measured = series[actor.key].filter((p) => p.v !== null).at(-1);
    last.push(`${actor.label}: ${measured ? formatNumber(Math.round(measured.v * 100) / 100) : t("panels.emotions.unmeasured")}`);
  }
  pics.append(timeline(series, who, t("panels.chart.timeline", { summary: last.join("; ") })));
}
