// The settings panel's model connection (docs/behaviour/web.md#model-connection): which
// chat model answers and whether it comes from the environment or was set here
// (GET /page/model). The installation's operator may fill in an OpenAI-compatible URL,
// a model and a key, "Test" it like `novaberg doctor` (POST /page/model/test: a
// structured call and an embedding, each said in words), "Apply" it (PUT: checked again,
// then used by every process from its next call) or reset it to the environment's
// (DELETE). Everyone else sees the model's name and that only the operator can change it.
// The key is never shown: the server sends its last four characters at most.
"use strict";

import { call, get } from "./api.js";
import { formatDateTime, locale, onLanguageChange, t } from "./i18n.js";

let box = null;
let current = null; // the last GET /page/model
let check = null; // the last check's result
let status = { key: "", vars: {} }; // the status line, redrawn in the new language
let problem = null; // { key } of a local complaint or { code, reason } of a refused request

const role = (name) => box.querySelector(`[data-role=${name}]`);
const form = () => role("model-form");

// Seconds with one decimal in the UI's locale ("0,4" / "0.4").
function seconds(value) {
  return value.toLocaleString(locale(), { minimumFractionDigits: 1, maximumFractionDigits: 1 });
}

// One line of the check: ok with its numbers, or what failed in words and the server's
// own message beneath.
function checkLine(kind, probe) {
  const li = document.createElement("li");
  li.dataset.testid = `model-check-${kind}`;
  if (probe.ok) {
    li.textContent = kind === "chat"
      ? t("model.chatOk", { seconds: seconds(probe.sekunden) })
      : t("model.embedOk", { dims: probe.dimension, seconds: seconds(probe.sekunden) });
    return li;
  }
  const reason = t(`model.problem.${probe.problem || "fehler"}`, {
    dims: probe.dimension ?? "?",
    schema: probe.schema_dimension ?? "?",
  });
  const line = document.createElement("span");
  line.className = "bad";
  line.textContent = t(kind === "chat" ? "model.chatFailed" : "model.embedFailed", { reason });
  li.append(line);
  if (probe.detail) {
    const small = document.createElement("small");
    small.textContent = probe.detail;
    li.append(small);
  }
  return li;
}

function sourceLine(c) {
  if (c.quelle === "seite") {
    const when = c.geaendert_am ? formatDateTime(new Date(c.geaendert_am)) : "";
    return t("model.sourcePage", { model: c.modell, by: c.geaendert_von || "?", when });
  }
  return t("model.sourceEnv", { model: c.modell, backend: c.backend });
}

function draw() {
  if (!box || !current) return;
  role("model-source").textContent = sourceLine(current);
  role("model-operator-only").hidden = current.darf_aendern;
  form().hidden = !current.darf_aendern;
  role("model-key-hint").textContent = current.schluessel
    ? t("model.keyHintSet", { tail: current.schluessel })
    : t("model.keyHintNone");
  role("model-check").replaceChildren(
    ...(check ? [checkLine("chat", check.chat), checkLine("embeddings", check.embeddings)] : []),
  );
  role("model-status").textContent = status.key ? t(status.key, status.vars) : "";
  const error = role("model-error");
  error.textContent = problem ? errorText(problem) : "";
  error.hidden = !problem;
}

function errorText(p) {
  if (p.key) return t(p.key);
  const known = `model.error.${p.code}`;
  const text = t(known);
  return text === known ? t("model.error.other", { reason: p.reason }) : text;
}

function fill(c) {
  const el = form().elements;
  el.url.value = c.url || "";
  el.modell.value = c.quelle === "seite" || c.url ? c.modell : "";
  el.schluessel.value = "";
}

function say(key, vars = {}) {
  status = { key, vars };
}

function wanted() {
  const el = form().elements;
  const body = { url: el.url.value.trim(), modell: el.modell.value.trim() };
  if (el.schluessel.value) body.schluessel = el.schluessel.value;
  return body;
}

// Address and model are needed: say so and mark the empty fields.
function incomplete(body) {
  const el = form().elements;
  for (const name of ["url", "modell"]) {
    if (body[name]) el[name].removeAttribute("aria-invalid");
    else el[name].setAttribute("aria-invalid", "true");
  }
  const missing = !body.url || !body.modell;
  if (missing) {
    problem = { key: "model.missing" };
    say("");
    draw();
  }
  return missing;
}

// Run one request with the status line saying what happens; a refusal becomes `problem`.
async function act(busyKey, run) {
  problem = null;
  say(busyKey);
  draw();
  try {
    await run();
  } catch (err) {
    problem = { code: err.code || "", reason: err.message };
    say("");
  }
  draw();
}

async function test() {
  const body = wanted();
  if (incomplete(body)) return;
  await act("model.testing", async () => {
    check = await call("POST", "/page/model/test", body);
    say(check.ok ? "model.tested" : "");
  });
}

// "Apply" checks again on the server; a refused check comes back with its lines.
async function apply() {
  const body = wanted();
  if (incomplete(body)) return;
  await act("model.applying", async () => {
    try {
      const done = await call("PUT", "/page/model", body);
      current = done.verbindung;
      check = done.pruefung;
      fill(current);
      say("model.applied");
    } catch (err) {
      check = (err.data && err.data.pruefung) || null;
      throw err;
    }
  });
}

async function reset() {
  await act("model.resetting", async () => {
    current = await call("DELETE", "/page/model");
    check = null;
    fill(current);
    say("model.resetDone");
  });
}

export function mount(panel) {
  box = panel.querySelector("[data-role=model-connection]");
  form().addEventListener("submit", (ev) => {
    ev.preventDefault();
    apply();
  });
  role("model-test").addEventListener("click", () => test());
  role("model-reset").addEventListener("click", () => reset());
  onLanguageChange(() => draw());
}

// Read the connection in use (after sign-in and whenever the settings open).
export async function refresh() {
  if (!box) return;
  try {
    current = await get("/page/model");
  } catch (err) {
    problem = { code: err.code || "", reason: err.message };
    draw();
    return;
  }
  if (form().hidden || !form().elements.url.value) fill(current);
  draw();
}
