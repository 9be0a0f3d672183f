// The turn inspector's timeline: every node run of a turn (its pipeline-log row) as a bar on
// one time axis, grouped into the stages of the two graphs — listening (the
// HumanGraph, path 1), remembering (db_access to memory_anchor), deciding and acting
// (router, planner, agents), answering (direction, stance, composer, responder), checking
// (thinker, tribunal, evaluate, corrector) and afterwards (her own answer perceived,
// feelings kept, salience, imprint, dispatcher). A row ends at `erstellt_am` and lasted
// `dauer_ms`, so it started that long before. Positions are percentages of the turn's
// span: the picture fits any width (docs/behaviour/web.md#the-side-panels).
"use strict";

import { LANGUAGES, formatNumber, t } from "./i18n.js";

const STAGES = {
  recall: ["db_access", "ei_calc", "enricher", "emotional_gravitation", "reducer", "situation_node", "memory_anchor", "landscape"],
  decide: ["router", "appointments", "planner", "agent_dispatch"],
  write: ["conversation_vector", "stance_space", "composer", "responder"],
  check: ["thinker", "tribunal", "evaluate", "corrector"],
  after: ["perception_assistant", "ei_calc_persist", "salience", "imprint", "uptake", "dispatcher"],
};
export const ORDER = ["listen", "recall", "decide", "write", "check", "after", "other"];

/** The stage of one node run: path 1 is listening, path 2 by node, an agent's
 * own graph is acting. */
export function stageOf(row) {
  if (row.quelle === "human") return "listen";
  for (const [stage, nodes] of Object.entries(STAGES)) if (nodes.includes(row.node)) return stage;
  return row.quelle === "agent" ? "decide" : "other";
}

/** A node in words ("responder" → "Antwort schreiben"); unknown nodes by their name. */
export function nodeName(node) {
  const key = `panels.node.${node}`;
  return key in LANGUAGES.de ? t(key) : String(node).replaceAll("_", " ");
}

/** "120 ms" or "2,4 s". */
export function duration(ms) {
  if (ms < 1000) return t("panels.inspector.ms", { ms: Math.round(ms) });
  return t("panels.inspector.seconds", { seconds: formatNumber(Math.round(ms / 100) / 10) });
}

// "2026-12-05T22:13:00.123456+00:00": JavaScript reads three fraction digits at most.
const parseTime = (text) => Date.parse(String(text).replace(/(\.\d{3})\d+/, "$1"));

/** The rows placed in time: {row, start, end} in ms since the turn's first start. */
export function placed(rows) {
  const spans = rows.map((row) => {
    const end = parseTime(row.erstellt_am);
    const ms = typeof row.dauer_ms === "number" ? row.dauer_ms : 0;
    return { row, start: end - ms, end };
  }).filter((s) => Number.isFinite(s.end));
  if (!spans.length) return { spans, total: 0 };
  const t0 = Math.min(...spans.map((s) => s.start));
  for (const s of spans) { s.start -= t0; s.end -= t0; }
  return { spans, total: Math.max(...spans.map((s) => s.end)) };
}

function h(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

// A bar from `start` to `end` on a track of the turn's `total` span.
function bar(start, end, total, cls) {
  const track = h("div", undefined, { class: `track ${cls}`, "aria-hidden": "true" });
  const fill = h("div", undefined, { class: "bar" });
  const left = total ? (start / total) * 100 : 0;
  const width = total ? Math.max(((end - start) / total) * 100, 0.8) : 100;
  fill.style.left = `${Math.min(left, 99.2)}%`;
  fill.style.width = `${Math.min(width, 100 - Math.min(left, 99.2))}%`;
  track.append(fill);
  return track;
}

/** The timeline section: one block per stage (its bar, its words, its nodes' bars). */
export function timelineSection(rows, name) {
  const { spans, total } = placed(rows);
  const s = h("section", undefined, { "data-role": "timeline" });
  s.append(h("h3", t("panels.inspector.timeline")));
  const list = h("ol", undefined, { class: "timeline" });
  for (const stage of ORDER) {
    const mine = spans.filter((x) => stageOf(x.row) === stage);
    if (!mine.length) continue;
    const start = Math.min(...mine.map((x) => x.start));
    const end = Math.max(...mine.map((x) => x.end));
    const calls = mine.reduce((a, x) => a + (x.row.modell_aufrufe || 0), 0);
    const li = h("li", undefined, { class: "stage", "data-stage": stage });
    const head = h("p", undefined, { class: "stage-head" });
    head.append(h("strong", t(`panels.stage.${stage}`)), " ",
      h("span", calls
        ? t("panels.inspector.stageTimeCalls", { time: duration(end - start), count: calls })
        : t("panels.inspector.stageTime", { time: duration(end - start) }), { class: "hint" }));
    li.append(head, bar(start, end, total, "stage-bar"),
      h("p", t(`panels.stage.${stage}.what`, { name }), { class: "what" }));
    const nodes = h("ul", undefined, { class: "nodes" });
    for (const x of mine) {
      const item = h("li", undefined, { "data-node": x.row.node });
      const failed = x.row.ergebnis && x.row.ergebnis !== "ok";
      item.append(h("span", `${nodeName(x.row.node)} · ${duration(x.end - x.start)}${
        failed ? ` · ${t("panels.inspector.failed")}` : ""}`), bar(x.start, x.end, total, "node-bar"));
      nodes.append(item);
    }
    li.append(nodes);
    list.append(li);
  }
  s.append(list);
  const scale = h("p", undefined, { class: "scale hint", "aria-hidden": "true" });
  scale.append(h("span", duration(0)), h("span", duration(total)));
  s.append(scale);
  return s;
}
