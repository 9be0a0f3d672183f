// The turn inspector: for one answer (GET /pipeline/{turn_id}), a timeline of what happened
// — every node run a bar on one time axis, grouped into the graphs' stages and said in words
// (inspector_timeline.js) — with a sentence on how long it took, how the answer was checked
// and what memory it used. The developer's view shows behind the panel's "Details" switch:
// every node run in a table with duration, model calls and a detail, the tribunal's votes
// with scores, thresholds and reasons, corrections, the enricher's counts and what the turn
// understood. Nothing is wider than the panel, on a phone too.
"use strict";

import { enc, get } from "./api.js";
import { onLanguageChange, t } from "./i18n.js";
import { duration, nodeName, timelineSection } from "./inspector_timeline.js";
import { detailsShown, detailsSwitch } from "./panel_details.js";

let root = null;
let name = "Nova";
let shown = null; // {turnId, nodes} of the turn on screen, redrawn on a language change

function h(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

function section(title, role) {
  const s = h("section", undefined, { "data-role": role });
  s.append(h("h3", title));
  return s;
}

// What a stage decided, from its log row: its failure, else its plain values
// ("tor=eigener_gedanke", "entscheidung=fallback"); lists and maps stay in the row.
function note(i) {
  if (i.ausfall || i.fehler) return String(i.ausfall || i.fehler);
  return Object.entries(i)
    .filter(([, v]) => v !== null && v !== undefined && typeof v !== "object")
    .map(([k, v]) => `${k}=${typeof v === "number" ? +v.toPrecision(3) : v}`)
    .join(" ").slice(0, 80);
}

const verdictWord = (v) => (["ok", "warnung", "ablehnen"].includes(v) ? t(`panels.verdict.${v}`) : v ?? "–");

// The friendly summary: how long, how many model calls, how the answer was checked.
function summary(nodes) {
  const total = nodes.reduce((a, r) => a + (r.dauer_ms || 0), 0);
  const calls = nodes.reduce((a, r) => a + (r.modell_aufrufe || 0), 0);
  const s = section(t("panels.inspector.summary"), "summary");
  const ends = nodes.map((r) => Date.parse(String(r.erstellt_am).replace(/(\.\d{3})\d+/, "$1")));
  const starts = nodes.map((r, i) => ends[i] - (r.dauer_ms || 0));
  const span = nodes.length ? Math.max(...ends) - Math.min(...starts) : total;
  s.append(h("p", t("panels.inspector.took", { time: duration(span), count: calls })));
  const votes = nodes.filter((r) => r.node === "tribunal");
  const corrected = nodes.some((r) => r.node === "corrector");
  const evaluate = nodes.filter((r) => r.node === "evaluate").at(-1);
  const decision = (evaluate?.inhalt || {}).entscheidung;
  let checked;
  if (!votes.length) checked = t("panels.inspector.notChecked");
  else if (decision === "fallback") checked = t("panels.inspector.fallback", { name });
  else if (corrected) checked = t("panels.inspector.correctedThenOk", { count: votes.length });
  else checked = t("panels.inspector.checked", { verdict: verdictWord((votes.at(-1).inhalt || {}).urteil) });
  s.append(h("p", checked));
  const enricher = nodes.filter((r) => r.node === "enricher" && r.quelle !== "human").at(-1);
  if (enricher) {
    const i = enricher.inhalt || {};
    const counts = { name, short: i.kzg_treffer ?? 0, long: i.lzg_erinnerungen ?? 0, goals: i.ziele ?? 0 };
    const none = !counts.short && !counts.long && !counts.goals;
    s.append(h("p", t(none ? "panels.inspector.memoryNone" : "panels.inspector.memoryWords", counts),
      { "data-role": "memory-words" }));
  }
  return s;
}

function stages(rows) {
  const s = section(t("panels.inspector.nodes"), "stages");
  const table = h("table", undefined, { class: "node-table" });
  const head = h("tr");
  for (const key of ["step", "ms", "calls", "result"]) {
    head.append(h("th", t(`panels.inspector.col.${key}`), { scope: "col" }));
  }
  table.append(h("thead"), h("tbody"));
  table.tHead.append(head);
  for (const r of rows) {
    const tr = h("tr");
    const step = h("td");
    step.append(h("span", nodeName(r.node)), h("br"),
      h("small", `${r.quelle}/${r.node}`), h("br"), h("small", note(r.inhalt || {}), { class: "note" }));
    tr.append(step, h("td", r.dauer_ms === null ? "–" : Math.round(r.dauer_ms)), h("td", r.modell_aufrufe),
      h("td", r.ergebnis));
    table.tBodies[0].append(tr);
  }
  s.append(table);
  const total = rows.reduce((a, r) => a + (r.dauer_ms || 0), 0);
  const calls = rows.reduce((a, r) => a + (r.modell_aufrufe || 0), 0);
  s.append(h("p", t("panels.inspector.totals", { count: rows.length, ms: Math.round(total), calls })));
  return s;
}

function tribunal(rows) {
  const s = section(t("panels.inspector.tribunal"), "tribunal");
  if (!rows.length) { s.append(h("p", t("panels.inspector.noTribunal"))); return s; }
  for (const r of rows) {
    const i = r.inhalt || {};
    s.append(h("p", t("panels.inspector.round", { round: i.runde ?? 0, verdict: verdictWord(i.urteil) })));
    const ul = h("ul");
    for (const [role, vote] of Object.entries(i.stimmen || {})) {
      const reason = (i.begruendungen || {})[role];
      const score = (i.werte || {})[role];
      const limits = (i.schwellen || {})[role];
      const scored = score === null || score === undefined ? ""
        : ` (${t("panels.inspector.score", { score })}${limits ? ", " + t("panels.inspector.limits", { limits: limits.join("/") }) : ""})`;
      const who = t(`panels.inspector.role.${role}`) === `panels.inspector.role.${role}` ? role : t(`panels.inspector.role.${role}`);
      ul.append(h("li", `${who}: ${vote ? verdictWord(vote) : t("panels.inspector.failedVote")}${scored}${reason ? " – " + reason : ""}`));
    }
    for (const f of i.ausfaelle || []) ul.append(h("li", t("panels.inspector.failure", { what: f })));
    s.append(ul);
  }
  return s;
}

function corrections(rows) {
  const s = section(t("panels.inspector.corrections"), "corrections");
  if (!rows.length) { s.append(h("p", t("panels.inspector.noCorrection"))); return s; }
  const ul = h("ul");
  for (const r of rows) {
    const i = r.inhalt || {};
    const what = r.node === "thinker"
      ? t("panels.inspector.thinker", { result: `${i.ergebnis ?? r.ergebnis}${i.probleme ? " – " + i.probleme : ""}` })
      : t("panels.inspector.corrector", { round: i.runde ?? "?" }) + (i.ausfall ? ` (${t("panels.inspector.failure", { what: i.ausfall })})` : "");
    ul.append(h("li", what));
  }
  s.append(ul);
  return s;
}

function memoryUsed(rows) {
  const s = section(t("panels.inspector.memoryUsed"), "memory-used");
  const enricher = rows.filter((r) => r.node === "enricher" && r.quelle !== "human").at(-1);
  if (!enricher) { s.append(h("p", t("panels.inspector.noData"))); return s; }
  const i = enricher.inhalt || {};
  s.append(h("p", t("panels.inspector.memoryCounts", {
    short: i.kzg_treffer ?? 0, long: i.lzg_erinnerungen ?? 0, goals: i.ziele ?? 0,
    active: i.aktiviert ?? 0, entries: i.memory_entries_raw ?? 0,
  })));
  return s;
}

// What the turn understood and how it steered it: the situation's reading and its acute
// objects, what the router saw as [LAGE], the planner's order, an impulse's bridge.
function understanding(rows) {
  const s = section(t("panels.inspector.understanding"), "understanding");
  const ul = h("ul");
  for (const r of rows) {
    const i = r.inhalt || {};
    if (r.node === "situation_node") {
      let line = `${t("panels.inspector.situation")}: ${i.stand ?? "–"}${i.quelle ? " ← " + i.quelle : ""}`;
      if ((i.akut || []).length) line += ` · ${t("panels.inspector.acute")}: ${i.akut.join(", ")}`;
      if ("bruecke" in i) line += i.bruecke ? ` · ${t("panels.inspector.bridge")}: ${i.ausloeser_turn_id} (${i.bruecke_durch})` : "";
      ul.append(h("li", line));
    } else if (r.node === "router" && (i.lage || []).length) {
      ul.append(h("li", `${nodeName("router")} [LAGE]: ${i.lage.join(", ")}`));
    } else if (r.node === "planner" && (i.plan || []).length) {
      const by = (i.nach_objekt || []).length ? ` (${t("panels.inspector.acute")}: ${i.nach_objekt.join(", ")})` : "";
      ul.append(h("li", `${t("panels.inspector.plan")}: ${i.plan.map((x) => x.agent).join(" → ")}${by}`));
    } else if (r.node === "composer" && i.bruecke) {
      ul.append(h("li", `${nodeName("composer")} [SACHLAGE-BRUECKE]: ${i.bruecke.ausloeser_turn_id} (${i.bruecke.gefunden_durch})`));
    }
  }
  if (!ul.children.length) { s.append(h("p", t("panels.inspector.noData"))); return s; }
  s.append(ul);
  return s;
}

function draw() {
  if (!root || !shown) return;
  const { turnId, nodes } = shown;
  const body = root.querySelector("[data-role=inspector-body]");
  const parts = [summary(nodes), timelineSection(nodes, name)];
  if (!shown.done) parts.splice(1, 0, h("p", t("panels.inspector.writing"), { class: "hint", role: "status" }));
  if (detailsShown(root)) {
    parts.push(
      h("p", t("panels.inspector.turn", { turn: turnId }), { class: "turn-id" }),
      stages(nodes),
      tribunal(nodes.filter((r) => r.node === "tribunal")),
      corrections(nodes.filter((r) => r.node === "corrector" || (r.node === "thinker" && (r.inhalt || {}).ergebnis))),
      memoryUsed(nodes),
      understanding(nodes),
    );
  }
  body.replaceChildren(...parts);
}

const RETRIES = 4; // the pipeline log is written about once a second: a fresh turn may lag
const FOLLOW = 20; // times a turn still being written is asked again, a second apart

// A turn is written to its end when the character graph's dispatcher logged its row (or
// a node failed); before that — the answer leaves before the after-steps — the timeline
// grows while the panel is open.
const complete = (nodes) => nodes.some((r) => (r.quelle === "character" && r.node === "dispatcher")
  || (r.ergebnis && r.ergebnis !== "ok"));

export async function show(turnId, attempt = 0, follow = 0) {
  if (!root) return;
  const body = root.querySelector("[data-role=inspector-body]");
  if (!follow) body.replaceChildren(h("p", t("panels.inspector.loading")));
  root.dataset.turn = turnId;
  try {
    const data = await get(`/pipeline/${enc(turnId)}`);
    if (root.dataset.turn !== turnId) return; // another answer was chosen meanwhile
    const nodes = data.rows.filter((r) => r.art === "node");
    const done = complete(nodes);
    shown = { turnId, nodes, done };
    draw();
    root.dataset.complete = String(done);
    root.dataset.loaded = turnId;
    if (!done && follow < FOLLOW) setTimeout(() => show(turnId, 0, follow + 1), 1000);
  } catch (err) {
    if (err.status === 404 && attempt < RETRIES && root.dataset.turn === turnId) {
      setTimeout(() => show(turnId, attempt + 1, follow), 1000);
      return;
    }
    if (follow) return; // the turn on screen stays; a later look asks again
    shown = null;
    body.replaceChildren(h("p", err.status === 404
      ? t("panels.inspector.notStored")
      : t("panels.inspector.notLoaded", { reason: err.message })));
  }
}

/** The character's name as the page shows it (the picker's option). */
export function setCharacterName(characterName) {
  name = characterName || name;
  draw();
}

function hint() {
  if (shown || root.dataset.turn) return;
  root.querySelector("[data-role=inspector-body]").replaceChildren(h("p", t("panels.inspector.hint"), { class: "hint" }));
}

export function mount(element) {
  root = element;
  detailsSwitch(root, draw);
  onLanguageChange(() => { draw(); hint(); });
  hint();
}
