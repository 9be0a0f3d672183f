// The character editor: a dialog to write a new character, change one of the person's own
// (name, description, personality, scenario, greeting) and give it a picture (PATCH
// /characters/{id}, POST /new-character, PUT /characters/{id}/avatar). A built-in
// character (Nova) is read-only for everyone: "Bearbeiten" offers a copy of it instead,
// saved as a new own character. A refused save keeps the dialog open with the reason and
// the field marked. The persona the model is given changes from the next turn on.
"use strict";

import { call, enc, get } from "./api.js";
import { forget, avatar } from "./cards.js";
import { t, translatePage } from "./i18n.js";

const FIELDS = ["name", "beschreibung", "persoenlichkeit", "szenario", "erste_nachricht"];
const PICTURE_MAX_BYTES = 512 * 1024; // what PUT /characters/{id}/avatar takes
const PICTURE_TYPES = ["image/png", "image/jpeg", "image/webp"];

let dialog = null;
let shown = null;        // the character the picker shows (a GET /characters item)
let mode = "edit";       // "edit" (own), "copy" (of a built-in one) or "new"
let saved = async () => {};
let editor = null;       // the "Bearbeiten" button: usable once the character is known

const part = (role) => dialog.querySelector(`[data-role="${role}"]`);
const field = (name) => dialog.querySelector(`[name="${name}"]`);

export function mount(element, editButton, newButton, onSaved) {
  dialog = element;
  saved = onSaved;
  editor = editButton;
  editor.disabled = shown === null;
  editButton.addEventListener("click", () => open(shown && shown.eigen === false ? "copy" : "edit"));
  newButton.addEventListener("click", () => open("new"));
  part("editor-cancel").addEventListener("click", () => dialog.close());
  part("editor-form").addEventListener("input", (ev) => {
    if (ev.target.getAttribute("aria-invalid") !== "true") return;
    ev.target.removeAttribute("aria-invalid"); // corrected: the refusal no longer applies
    say("");
  });
  part("editor-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    save();
  });
}

/** The picker shows `c` now: "Bearbeiten" edits it (or copies a built-in one). */
export function show(c) {
  shown = c;
  if (editor) editor.disabled = false;
}

function say(error) {
  part("editor-error").textContent = error;
  part("editor-error").hidden = !error;
}

// The server's refusal in the page's language when the catalogue knows its code.
function reason(err) {
  const key = `chars.error.${err.code}`;
  const text = err.code ? t(key) : key;
  return text !== key ? text : err.message;
}

async function open(how) {
  mode = how;
  say("");
  part("editor-status").textContent = "";
  for (const name of FIELDS) {
    field(name).value = "";
    field(name).removeAttribute("aria-invalid");
  }
  field("bild").value = "";
  const name = shown ? shown.name : "";
  part("editor-title").textContent =
    how === "new" ? t("chars.editorNew") : how === "copy" ? t("chars.editorCopy", { name }) : t("chars.editorTitle", { name });
  part("editor-note").textContent = how === "copy" ? t("chars.editorBuiltIn", { name }) : "";
  part("editor-note").hidden = how !== "copy";
  part("editor-picture").replaceChildren(how === "edit" && shown ? avatar(shown) : "");
  translatePage(dialog);
  dialog.showModal();
  if (how !== "new" && shown) {
    try {
      const record = await get(`/characters/${enc(shown.character_id)}`);
      for (const f of FIELDS) field(f).value = record[f] || "";
      if (how === "copy") field("name").value = t("chars.copyName", { name: record.name });
    } catch (err) {
      say(reason(err));
    }
  }
  field("name").focus();
}

function pictureData(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

async function save() {
  say("");
  for (const name of FIELDS) field(name).removeAttribute("aria-invalid");
  const body = Object.fromEntries(FIELDS.map((name) => [name, field(name).value]));
  if (!body.name.trim()) return refuse("name", t("chars.error.nameMissing"));
  const file = field("bild").files[0];
  if (file && (!PICTURE_TYPES.includes(file.type) || file.size > PICTURE_MAX_BYTES)) {
    return refuse("bild", t("chars.error.bild_ungueltig"));
  }
  part("editor-save").disabled = true;
  part("editor-status").textContent = t("chars.editorSaving");
  try {
    const record = mode === "edit"
      ? await call("PATCH", `/characters/${enc(shown.character_id)}`, body)
      : await call("POST", "/new-character", body);
    if (file) {
      await call("PUT", `/characters/${enc(record.character_id)}/avatar`, { bild: await pictureData(file) });
      forget(record.character_id);
    }
    part("editor-status").textContent = "";
    dialog.close();
    await saved(record.character_id);
  } catch (err) {
    part("editor-status").textContent = "";
    refuse(err.field || (err.code === "bild_ungueltig" ? "bild" : ""), reason(err));
  } finally {
    part("editor-save").disabled = false;
  }
}

function refuse(name, text) {
  say(text);
  const input = name && field(name);
  if (input) {
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }
}
