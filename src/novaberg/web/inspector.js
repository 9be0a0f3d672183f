// The turn inspector: for one answer, every pipeline stage with its duration and model
// calls, the tribunal's votes and reasons, corrections, the memory the turn used and what
// it understood (GET /pipeline/{turn_id}).
"use strict";

import { enc, get } from "./api.js";

let root = null;

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

function stages(rows) {
  const s = section("Stufen", "stages");
  const table = h("table");
  const head = h("tr");
  for (const t of ["Stufe", "Graph", "ms", "Aufrufe", "Ergebnis", "Detail"]) head.append(h("th", t, { scope: "col" }));
  table.append(h("thead"), h("tbody"));
  table.tHead.append(head);
  for (const r of rows) {
    const tr = h("tr");
    tr.append(h("td", r.node), h("td", r.quelle),
      h("td", r.dauer_ms === null ? "–" : Math.round(r.dauer_ms)), h("td", r.modell_aufrufe),
      h("td", r.ergebnis), h("td", note(r.inhalt || {})));
    table.tBodies[0].append(tr);
  }
  const scroller = h("div", undefined, { class: "scroll-x", tabindex: "0", role: "region", "aria-label": "Stufen" });
  scroller.append(table);
  s.append(scroller);
  const total = rows.reduce((a, r) => a + (r.dauer_ms || 0), 0);
  const calls = rows.reduce((a, r) => a + (r.modell_aufrufe || 0), 0);
  s.append(h("p", `${rows.length} Stufen · ${Math.round(total)} ms · ${calls} Modellaufrufe`));
  return s;
}

function tribunal(rows) {
  const s = section("Tribunal", "tribunal");
  if (!rows.length) { s.append(h("p", "kein Tribunal in diesem Turn")); return s; }
  for (const r of rows) {
    const i = r.inhalt || {};
    s.append(h("p", `Runde ${i.runde ?? 0}: Urteil ${i.urteil ?? "–"}`));
    const ul = h("ul");
    for (const [role, vote] of Object.entries(i.stimmen || {})) {
      const reason = (i.begruendungen || {})[role];
      const score = (i.werte || {})[role];
      const limits = (i.schwellen || {})[role];
      const scored = score === null || score === undefined ? ""
        : ` (Wert ${score}${limits ? ", Schwellen " + limits.join("/") : ""})`;
      ul.append(h("li", `${role}: ${vote ?? "ausgefallen"}${scored}${reason ? " – " + reason : ""}`));
    }
    for (const f of i.ausfaelle || []) ul.append(h("li", `Ausfall: ${f}`));
    s.append(ul);
  }
  return s;
}

function corrections(rows) {
  const s = section("Korrekturen", "corrections");
  if (!rows.length) { s.append(h("p", "keine Korrektur")); return s; }
  const ul = h("ul");
  for (const r of rows) {
    const i = r.inhalt || {};
    const what = r.node === "thinker"
      ? `Denker: ${i.ergebnis ?? r.ergebnis}${i.probleme ? " – " + i.probleme : ""}`
      : `Korrektor Runde ${i.runde ?? "?"}${i.ausfall ? " (Ausfall: " + i.ausfall + ")" : ""}`;
    ul.append(h("li", what));
  }
  s.append(ul);
  return s;
}

function memoryUsed(rows) {
  const s = section("Genutzte Erinnerungen", "memory-used");
  const enricher = rows.filter((r) => r.node === "enricher" && r.quelle !== "human").at(-1);
  if (!enricher) { s.append(h("p", "keine Angabe")); return s; }
  const i = enricher.inhalt || {};
  s.append(h("p", `Kurzzeit-Treffer ${i.kzg_treffer ?? 0} · Langzeit-Erinnerungen ${
    i.lzg_erinnerungen ?? 0} · Ziele ${i.ziele ?? 0} (aktiviert ${i.aktiviert ?? 0}) · Einträge ${
    i.memory_entries_raw ?? 0}`));
  return s;
}

// What the turn understood and how it steered it: the situation's reading and its acute
// objects, what the router saw as [LAGE], the planner's order, an impulse's bridge.
function understanding(rows) {
  const s = section("Verstehen", "understanding");
  const ul = h("ul");
  for (const r of rows) {
    const i = r.inhalt || {};
    if (r.node === "situation_node") {
      let line = `Sachlage: ${i.stand ?? "–"}${i.quelle ? " aus " + i.quelle : ""}`;
      if ((i.akut || []).length) line += ` · akut: ${i.akut.join(", ")}`;
      if ("bruecke" in i) line += i.bruecke ? ` · Brücke zu ${i.ausloeser_turn_id} (${i.bruecke_durch})` : " · keine Brücke";
      ul.append(h("li", line));
    } else if (r.node === "router" && (i.lage || []).length) {
      ul.append(h("li", `Router sah [LAGE]: ${i.lage.join(", ")}`));
    } else if (r.node === "planner" && (i.plan || []).length) {
      const by = (i.nach_objekt || []).length ? ` (akut zuerst: ${i.nach_objekt.join(", ")})` : "";
      ul.append(h("li", `Plan: ${i.plan.map((t) => t.agent).join(" → ")}${by}`));
    } else if (r.node === "composer" && i.bruecke) {
      ul.append(h("li", `Verfasser [SACHLAGE-BRUECKE]: ${i.bruecke.ausloeser_turn_id} (${i.bruecke.gefunden_durch})`));
    }
  }
  if (!ul.children.length) { s.append(h("p", "keine Angabe")); return s; }
  s.append(ul);
  return s;
}

const RETRIES = 4; // the pipeline log is written about once a second: a fresh turn may lag

export async function show(turnId, attempt = 0) {
  if (!root) return;
  const body = root.querySelector("[data-role=inspector-body]");
  body.replaceChildren(h("p", "lädt …"));
  root.dataset.turn = turnId;
  try {
    const data = await get(`/pipeline/${enc(turnId)}`);
    const nodes = data.rows.filter((r) => r.art === "node");
    body.replaceChildren(
      h("p", `Turn ${turnId}`, { class: "turn-id" }),
      stages(nodes),
      tribunal(nodes.filter((r) => r.node === "tribunal")),
      corrections(nodes.filter((r) => r.node === "corrector" || (r.node === "thinker" && (r.inhalt || {}).ergebnis))),
      memoryUsed(nodes),
      understanding(nodes),
    );
    root.dataset.loaded = turnId;
  } catch (err) {
    if (err.status === 404 && attempt < RETRIES && root.dataset.turn === turnId) {
      setTimeout(() => show(turnId, attempt + 1), 1000);
      return;
    }
    body.replaceChildren(h("p", err.status === 404
      ? "Für diesen Turn ist (noch) kein Ablauf gespeichert."
      : `nicht geladen: ${err.message}`));
  }
}

export function mount(element) {
  root = element;
}
