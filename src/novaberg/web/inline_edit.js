// Editing one list entry in place (memory and tasks panels): the entry turns into a small
// form, Enter saves, Escape cancels and a refused save keeps the form open with the server's
// reason next to it, so nothing the person typed is lost.
"use strict";

import { t } from "./i18n.js";

let open = 0;

// The server's refusal in words a person can act on.
function reason(err) {
  if (err.status === 422) return t("edit.invalid");
  if (err.status === 404) return t("edit.gone");
  return err.message;
}

// Whether an entry is being edited (a panel reloading now would throw the typing away).
export const editing = () => open > 0;

// fields: [{ name, label, value, type?, required? }]; save(values) resolves when stored
// (it may reload the list) or throws an Error whose message is shown; onClose() runs after
// a cancel and after a successful save.
export function editInline(li, { fields, save, onClose, label }) {
  const before = [...li.childNodes];
  const form = document.createElement("form");
  form.className = "inline-edit";
  form.setAttribute("aria-label", label);
  const inputs = fields.map((f) => {
    const wrap = document.createElement("label");
    const caption = document.createElement("span");
    caption.className = "caption";
    caption.textContent = f.label;
    const input = document.createElement("input");
    input.type = f.type || "text";
    input.name = f.name;
    input.value = f.value ?? "";
    if (f.required !== false) input.required = true;
    if (f.maxLength) input.maxLength = f.maxLength;
    wrap.append(caption, input);
    form.append(wrap);
    return input;
  });
  const error = document.createElement("small");
  error.className = "edit-error";
  error.setAttribute("role", "alert");
  const saveBtn = document.createElement("button");
  saveBtn.type = "submit";
  saveBtn.className = "small";
  saveBtn.textContent = t("edit.save");
  const cancelBtn = document.createElement("button");
  cancelBtn.type = "button";
  cancelBtn.className = "small";
  cancelBtn.textContent = t("edit.cancel");
  form.append(saveBtn, cancelBtn, error);
  li.replaceChildren(form);
  li.classList.add("is-editing");
  open += 1;
  let closed = false;

  const close = () => {
    if (closed) return;
    closed = true;
    open -= 1;
    li.classList.remove("is-editing");
    li.replaceChildren(...before);
    if (onClose) onClose();
  };

  form.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") {
      ev.preventDefault();
      close();
    }
  });
  cancelBtn.addEventListener("click", close);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const values = Object.fromEntries(inputs.map((i) => [i.name, i.value]));
    saveBtn.disabled = true;
    error.textContent = "";
    for (const i of inputs) i.removeAttribute("aria-invalid");
    try {
      await save(values);
      close();
    } catch (err) {
      error.textContent = t("edit.notSaved", { error: reason(err) });
      for (const i of inputs) i.setAttribute("aria-invalid", "true");
      inputs[0].focus();
    } finally {
      saveBtn.disabled = false;
    }
  });
  inputs[0].focus();
  inputs[0].select();
  return form;
}

// A small button that opens the editor (its label names the entry for screen readers).
export function editButton(text, start) {
  const btn = document.createElement("button");
  btn.type = "button";
  btn.className = "small";
  btn.textContent = t("edit.edit");
  btn.setAttribute("aria-label", t("edit.editLabel", { text }));
  btn.addEventListener("click", start);
  return btn;
}
