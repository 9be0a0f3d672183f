// Why the character remembers something, derived from the fields the memory API returns
// (docs/behaviour/web.md#the-side-panels): how important it is (a short-term entry's
// salience, a long-term node's decayed weight) and the first reason that holds, in this
// order — she has needed it again and again (retrievals), it came up more than once
// (frequency), a feeling came with it (the speaker's perceived emotion), what it says about
// the person (the salience's dimension), and whose words it is (the observer). The result
// is a catalogue text: "Wichtig, weil es dich betrifft." / "Important, because it is about you."
"use strict";

import { feeling } from "./feelings.js";
import { t } from "./i18n.js";

const NEUTRAL = "neutral";
const DIMENSIONS = ["emotion", "interessen", "kognition", "kommunikation", "werte"];

/** How important a short-term entry is, from its salience in [0, 1]. */
export function shortTermWeight(salience) {
  if (typeof salience !== "number") return "panels.memory.weight.kept";
  if (salience >= 0.7) return "panels.memory.weight.important";
  if (salience >= 0.4) return "panels.memory.weight.kept";
  return "panels.memory.weight.passing";
}

/** How firmly a long-term node sits, from its decayed weight (1.0 = a fresh strong entry). */
export function longTermWeight(weight) {
  if (typeof weight !== "number") return "panels.memory.weight.kept";
  if (weight >= 1.5) return "panels.memory.weight.rooted";
  if (weight >= 0.6) return "panels.memory.weight.important";
  return "panels.memory.weight.fading";
}

/** The reason clause for one entry: {key, vars}. `row` has the API's fields (German
 * names): beobachter, emotion, dimension, haeufigkeit, abrufe (long-term only). */
export function reason(row, name) {
  const mine = row.beobachter === "assistant";
  if ((row.abrufe ?? 0) >= 2) return { key: "panels.memory.reason.recalled", vars: { name, count: row.abrufe } };
  if ((row.haeufigkeit ?? 0) >= 2) return { key: "panels.memory.reason.repeated", vars: { count: row.haeufigkeit } };
  if (row.emotion && row.emotion !== NEUTRAL) {
    const vars = { name, feeling: feeling(row.emotion) };
    return { key: mine ? "panels.memory.reason.sheFelt" : "panels.memory.reason.youFelt", vars };
  }
  if (!mine && DIMENSIONS.includes(row.dimension)) return { key: `panels.memory.reason.${row.dimension}`, vars: {} };
  if (mine) return { key: "panels.memory.reason.saidByHer", vars: { name } };
  return { key: "panels.memory.reason.aboutYou", vars: {} };
}

/** "Wichtig, weil es dich betrifft." — importance and reason as one sentence. */
export function why(weightKey, row, name) {
  const r = reason(row, name);
  return t("panels.memory.because", { importance: t(weightKey), reason: t(r.key, r.vars) });
}
