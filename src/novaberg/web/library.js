// The settings panel's "Bibliothek": the folders the person lets Nova read (GET
// /library/roots) with their counts, approving one by its path (POST; a refusal shows the
// server's one-line reason), revoking one after asking (DELETE) and reading it again (POST
// …/reindex). While a pass runs the panel polls GET /library/roots every second and shows
// "Indiziere <Ordner>: 12 von 40 Dateien"; when it ends, the line says what it found.
"use strict";

import { call, get } from "./api.js";
import { has, setText, t } from "./i18n.js";

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

// The error line: the catalogue's `key` with `vars`, or (`key` "") none.
function showError(key, vars = {}) {
  const p = role("library-error");
  if (key) setText(p, key, vars);
  else p.textContent = "";
  p.hidden = !key;
  const input = role("library-form").elements.pfad;
  if (key) input.setAttribute("aria-invalid", "true");
  else input.removeAttribute("aria-invalid");
}

// "1 Datei" / "3 Dateien": the catalogue has `key.one` and `key.many`.
const plural = (n, key) => ({ key: `${key}.${n === 1 ? "one" : "many"}`, vars: { n } });
const say = (word) => t(word.key, word.vars);

function counts(r) {
  const parts = [say(plural(r.dateien, "library.files")), say(plural(r.abschnitte, "library.passages"))];
  if (r.fehler) parts.push(t("library.unreadable", { n: r.fehler }));
  if (r.uebersprungen) parts.push(t("library.skipped", { n: r.uebersprungen }));
  return parts.join(" · ");
}

// The progress line of one folder, or "" when nothing ran lately.
function progressLine(r) {
  const p = r.fortschritt;
  if (!p) return "";
  if (p.zustand === "laeuft") {
    return p.gesamt === null
      ? t("library.counting", { path: r.pfad })
      : t("library.progress", { path: r.pfad, done: p.erledigt, total: p.gesamt });
  }
  if (p.zustand === "fehlgeschlagen") return t("library.failed", { path: r.pfad, error: p.meldung });
  return t("library.finished", { path: r.pfad, counts: counts(r) });
}

// Revoking asks first, in place: the row's buttons become "Ja, widerrufen" / "Abbrechen".
function revokeButton(r) {
  const btn = el("button", t("library.revoke"), { type: "button", class: "small", "aria-label": t("library.revokeLabel", { path: r.pfad }), "data-testid": "library-revoke" });
  btn.addEventListener("click", () => {
    const ask = el("span", "", { class: "confirm", role: "group", "aria-label": t("library.revokeAsk", { path: r.pfad }) });
    const yes = el("button", t("library.revokeYes"), { type: "button", class: "small", "data-testid": "library-revoke-confirm" });
    const no = el("button", t("library.cancel"), { type: "button", class: "small" });
    ask.append(el("span", t("library.revokeQuestion") + " "), yes, " ", no);
    no.addEventListener("click", () => { ask.replaceWith(btn); btn.focus(); });
    yes.addEventListener("click", async () => {
      try {
        const done = await call("DELETE", `/library/roots/${r.id}`);
        setText(role("library-status"), "library.revoked", {
          path: done.pfad, passages: plural(done.abschnitte_geloescht, "library.passages"),
        });
        await refresh();
      } catch (err) {
        showError("library.notRevoked", { error: err.message });
      }
    });
    btn.replaceWith(ask);
    yes.focus();
  });
  return btn;
}

function reindexButton(r) {
  const btn = el("button", t("library.reindex"), { type: "button", class: "small", "aria-label": t("library.reindexLabel", { path: r.pfad }) });
  btn.addEventListener("click", async () => {
    try {
      await call("POST", `/library/roots/${r.id}/reindex`);
    } catch (err) {
      if (err.status === 409) showError("library.busy", { path: r.pfad });
      else showError("library.notStarted", { error: err.message });
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
  if (!roots.length) list.append(el("li", t("library.none")));
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
    setText(role("library-progress"), "library.notLoaded", { error: err.message });
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
    // the rule that refused it, in the page's language (the server's detail is English)
    const why = has(`library.refused.${err.reason}`)
      ? { key: `library.refused.${err.reason}`, vars: { path: pfad } }
      : err.message;
    showError("library.notApproved", { error: why });
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
