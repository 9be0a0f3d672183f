// The tasks panel: what the task agents keep for the person (GET/POST/PATCH/DELETE
// /agents/...): notes and lists, appointments, directives and Nova's identity. Each list can
// be added to, edited in place and cleaned up here; it reloads after every answer, since an
// agent may have changed it (not while an entry is being edited).
"use strict";

import { call, get } from "./api.js";
import { formatDate, formatDateTime, has, setText, t } from "./i18n.js";
import { editButton, editInline, editing } from "./inline_edit.js";

let root = null;

const KINDS = {
  notes: {
    path: "/agents/notes",
    show: (n) => [`${n.name}${n.text ? ": " + n.text : ""}`, word("tasks.type", n.typ)],
    body: (f) => ({ name: f.name.value, text: f.text.value, typ: f.typ.value }),
    edit: (n) => [
      { name: "name", label: t("tasks.name"), value: n.name, maxLength: 200 },
      { name: "text", label: t("tasks.text"), value: n.text, required: false, maxLength: 20000 },
    ],
    patch: (v) => ({ name: v.name, text: v.text }),
    empty: "tasks.noNotes",
  },
  timeline: {
    path: "/agents/timeline",
    show: (e) => [`${when(e)} ${e.title}`, word("tasks.event", e.event_type)],
    body: (f) => ({ title: f.title.value, event_time: isoWithOffset(f.when.value) }),
    edit: (e) => [
      { name: "title", label: t("tasks.title"), value: e.title, maxLength: 200 },
      { name: "when", label: t("tasks.when"), value: localInput(e.event_time), type: "datetime-local" },
      { name: "details", label: t("tasks.details"), value: e.details, required: false, maxLength: 2000 },
    ],
    patch: (v, e) => ({
      title: v.title,
      details: v.details,
      ...(v.when !== localInput(e.event_time) ? { event_time: isoWithOffset(v.when) } : {}),
    }),
    empty: "tasks.noEvents",
  },
  directives: {
    path: "/agents/directives",
    show: (r) => [r.anweisung, r.kontext || ""],
    body: (f) => ({ anweisung: f.anweisung.value }),
    edit: (r) => [
      { name: "anweisung", label: t("tasks.instruction"), value: r.anweisung, maxLength: 500 },
      { name: "kontext", label: t("tasks.context"), value: r.kontext || "", required: false, maxLength: 500 },
    ],
    patch: (v) => ({ anweisung: v.anweisung, kontext: v.kontext || null }),
    empty: "tasks.noDirectives",
  },
  identity: {
    path: "/agents/identity",
    show: (r) => [r.anweisung, ""],
    body: (f) => ({ anweisung: f.anweisung.value }),
    edit: (r) => [{ name: "anweisung", label: t("tasks.instruction"), value: r.anweisung, maxLength: 500 }],
    patch: (v) => ({ anweisung: v.anweisung }),
    empty: "tasks.noIdentity",
  },
};

// A stored word (a note's type, an appointment's kind) in the page's language; one the
// page does not know yet is shown as it came.
function word(area, value) {
  return value && has(`${area}.${value}`) ? t(`${area}.${value}`) : value || "";
}

// An appointment's time in the page's language: the day alone for an all-day entry (the
// server's `datum_lokal` then has no clock time).
function when(e) {
  const date = new Date(e.event_time);
  return /\d:\d/.test(e.datum_lokal || "") ? formatDateTime(date) : formatDate(date);
}

// "2031-05-02T10:00" (a datetime-local value) as ISO 8601 with this device's offset.
export function isoWithOffset(local) {
  const d = new Date(local);
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? "+" : "-";
  const pad = (n) => String(Math.floor(Math.abs(n))).padStart(2, "0");
  return `${local.length === 16 ? local + ":00" : local}${sign}${pad(off / 60)}:${pad(off % 60)}`;
}

// An ISO time as a datetime-local value in this device's zone ("2031-05-02T10:00").
export function localInput(iso) {
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function status(key, vars = {}) {
  setText(root.querySelector("[data-role=tasks-status]"), key, vars);
}

async function load(kind) {
  const kindOf = KINDS[kind];
  const list = root.querySelector(`[data-kind=${kind}] ul`);
  const rows = await get(kindOf.path);
  list.replaceChildren();
  for (const row of rows) {
    const [text, detail] = kindOf.show(row);
    const li = document.createElement("li");
    const span = document.createElement("span");
    span.textContent = text;
    li.append(span);
    if (detail) {
      const small = document.createElement("small");
      small.textContent = ` ${detail}`;
      li.append(small);
    }
    const del = document.createElement("button");
    del.type = "button";
    del.className = "small";
    del.textContent = t("tasks.remove");
    del.setAttribute("aria-label", t("tasks.removeLabel", { text }));
    del.addEventListener("click", async () => {
      try {
        await call("DELETE", `${kindOf.path}/${row.id}`);
        status("tasks.removed");
        await load(kind);
      } catch (err) { status("tasks.notRemoved", { error: err.message }); }
    });
    let saved = false;
    const edit = editButton(text, () => editInline(li, {
      label: t("tasks.editLabel", { text }),
      fields: kindOf.edit(row),
      save: async (values) => {
        await call("PATCH", `${kindOf.path}/${row.id}`, kindOf.patch(values, row));
        saved = true;
      },
      onClose: async () => {
        if (!saved) return;
        await load(kind);
        status("tasks.changed");
      },
    }));
    li.dataset.id = String(row.id);
    li.append(edit, del);
    list.append(li);
  }
  if (!rows.length) {
    const li = document.createElement("li");
    li.textContent = t(kindOf.empty);
    list.append(li);
  }
  list.dataset.count = String(rows.length);
}

export async function refresh() {
  if (!root || editing()) return;
  try {
    await Promise.all(Object.keys(KINDS).map(load));
    root.dataset.loaded = String(Date.now());
  } catch (err) {
    status("tasks.notLoaded", { error: err.message });
  }
}

export function mount(element) {
  root = element;
  for (const kind of Object.keys(KINDS)) {
    const form = root.querySelector(`[data-kind=${kind}] form`);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        await call("POST", KINDS[kind].path, KINDS[kind].body(form.elements));
        form.reset();
        status("tasks.saved");
        await load(kind);
      } catch (err) { status("tasks.notSaved", { error: err.message }); }
    });
  }
}
