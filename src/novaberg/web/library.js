// The settings panel's "Bibliothek": the folders the person lets Nova read (GET
// /library/roots) with their counts, approving one by its path (POST; a refusal shows the
// server's one-line reason), revoking one after asking (DELETE) and reading it again (POST
// …/reindex). While a pass runs the panel polls GET /library/roots every second and shows
// "Indiziere <Ordner>: 12 von 40 Dateien"; when it ends, the line says what it found.
"use strict";

import { call, get } from "./api.js";

const POLL_MS = 1000;

let box = null;
let timer = null;

const el = (tag, text, attrs = {}) => {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};

const role = (name) => box.querySelector(`[data-role=${name}]`);

function showError(text) {
  const p = role("library-error");
  p.textContent = text;
  p.hidden = !text;
  const input = role("library-form").elements.pfad;
  if (text) input.setAttribute("aria-invalid", "true");
  else input.removeAttribute("aria-invalid");
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

function counts(r) {
  const parts = [plural(r.dateien, "Datei", "Dateien"), plural(r.abschnitte, "Abschnitt", "Abschnitte")];
  if (r.fehler) parts.push(`${r.fehler} nicht lesbar`);
  if (r.uebersprungen) parts.push(`${r.uebersprungen} übersprungen`);
  return parts.join(" · ");
}

// The progress line of one folder, or "" when nothing ran lately.
function progressLine(r) {
  const p = r.fortschritt;
  if (!p) return "";
  if (p.zustand === "laeuft") {
    return p.gesamt === null
      ? `Indiziere ${r.pfad}: Dateien werden gezählt …`
      : `Indiziere ${r.pfad}: ${p.erledigt} von ${p.gesamt} Dateien`;
  }
  if (p.zustand === "fehlgeschlagen") return `${r.pfad}: Indizieren fehlgeschlagen (${p.meldung})`;
  return `${r.pfad}: fertig – ${counts(r)}`;
}

// Revoking asks first, in place: the row's buttons become "Ja, widerrufen" / "Abbrechen".
function revokeButton(r) {
  const btn = el("button", "Widerrufen", { type: "button", class: "small", "aria-label": `Widerrufen: ${r.pfad}`, "data-testid": "library-revoke" });
  btn.addEventListener("click", () => {
    const ask = el("span", "", { class: "confirm", role: "group", "aria-label": `Ordner ${r.pfad} widerrufen?` });
    const yes = el("button", "Ja, widerrufen", { type: "button", class: "small", "data-testid": "library-revoke-confirm" });
    const no = el("button", "Abbrechen", { type: "button", class: "small" });
    ask.append(el("span", "Index löschen und nicht mehr lesen? "), yes, " ", no);
    no.addEventListener("click", () => { ask.replaceWith(btn); btn.focus(); });
    yes.addEventListener("click", async () => {
      try {
        const done = await call("DELETE", `/library/roots/${r.id}`);
        role("library-status").textContent = `${done.pfad}: widerrufen, ${plural(done.abschnitte_geloescht, "Abschnitt", "Abschnitte")} gelöscht`;
        await refresh();
      } catch (err) {
        showError(`nicht widerrufen: ${err.detail || err.message}`);
      }
    });
    btn.replaceWith(ask);
    yes.focus();
  });
  return btn;
}

function reindexButton(r) {
  const btn = el("button", "Neu einlesen", { type: "button", class: "small", "aria-label": `Neu einlesen: ${r.pfad}` });
  btn.addEventListener("click", async () => {
    try {
      await call("POST", `/library/roots/${r.id}/reindex`);
    } catch (err) {
      showError(err.status === 409 ? `${r.pfad} wird gerade eingelesen` : `nicht gestartet: ${err.message}`);
    }
    await refresh();
  });
  return btn;
}

function render(roots) {
  const list = role("library-roots");
  list.replaceChildren(...roots.map((r) => {
    const li = el("li", undefined, { "data-root": String(r.id) });
    li.append(el("span", r.pfad, { class: "path" }), " ", el("small", counts(r), { "data-role": "library-counts" }), " ");
    li.append(reindexButton(r), " ", revokeButton(r));
    return li;
  }));
  if (!roots.length) list.append(el("li", "Noch kein Ordner freigegeben."));
  list.dataset.count = String(roots.length);
  const lines = roots.map(progressLine).filter(Boolean);
  const progress = role("library-progress");
  progress.textContent = lines.join(" · ");
  const running = roots.some((r) => r.fortschritt && r.fortschritt.zustand === "laeuft");
  progress.dataset.running = String(running);
  return running;
}

export async function refresh() {
  if (!box) return;
  clearTimeout(timer);
  try {
    const found = await get("/library/roots");
    if (render(found.wurzeln)) timer = setTimeout(refresh, POLL_MS);
  } catch (err) {
    role("library-progress").textContent = `Bibliothek nicht geladen: ${err.message}`;
  }
}

async function approve(form) {
  const pfad = form.elements.pfad.value.trim();
  if (!pfad) return;
  showError("");
  try {
    await call("POST", "/library/roots", { pfad });
    form.reset();
  } catch (err) {
    showError(`nicht freigegeben: ${err.detail || err.message}`);
  }
  await refresh();
}

export function mount(panel) {
  box = panel.querySelector("[data-role=library]");
  if (!box) return;
  role("library-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    approve(ev.target);
  });
}
