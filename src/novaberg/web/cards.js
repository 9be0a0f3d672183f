// Characters in the picker: each with its avatar — an imported card's picture (GET
// /characters/{id}/avatar, fetched with the token) or a generated initial (letter and
// colour, nothing external) — and card import by dropping a card on the page or choosing
// it in the file field (POST /characters); the new character is then selected.
"use strict";

import { enc, session, upload } from "./api.js";

// Backgrounds for white letters, each with a contrast of at least 4.5:1.
const PALETTE = ["#6d28d9", "#b91c1c", "#0369a1", "#047857", "#a16207", "#be185d", "#4338ca", "#374151"];
const pictures = new Map(); // character_id -> Promise of an object URL

export function initialColour(id) {
  let hash = 0;
  for (const ch of id) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

function picture(id) {
  if (!pictures.has(id)) {
    const url = fetch(`/characters/${enc(id)}/avatar`, {
      headers: { Authorization: `Bearer ${session.token}` },
    }).then(async (res) => {
      if (!res.ok) throw new Error(String(res.status));
      return URL.createObjectURL(await res.blob());
    });
    url.catch(() => pictures.delete(id)); // asked again next time
    pictures.set(id, url);
  }
  return pictures.get(id);
}

// A new picture was given: the next avatar of `id` is fetched again.
export function forget(id) {
  pictures.delete(id);
}

function initial(c) {
  const letter = document.createElement("span");
  letter.className = "initial";
  letter.textContent = (Array.from((c.name || c.character_id).trim())[0] || "?").toUpperCase();
  letter.style.backgroundColor = initialColour(c.character_id);
  return letter;
}

// The avatar of one character: decorative (the name is said next to it).
export function avatar(c) {
  const box = document.createElement("span");
  box.className = "avatar";
  box.dataset.character = c.character_id;
  box.setAttribute("aria-hidden", "true");
  if (!c.avatar) {
    box.append(initial(c));
    return box;
  }
  const img = document.createElement("img");
  img.alt = "";
  box.append(img);
  picture(c.character_id)
    .then((url) => { img.src = url; })
    .catch(() => img.replaceWith(initial(c)));
  return box;
}

// One button per character in `container`; the selected one is pressed.
export function showAvatars(container, list, selected, onPick) {
  container.replaceChildren(...list.map((c) => {
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "avatar-button";
    btn.dataset.character = c.character_id;
    btn.title = c.name;
    btn.setAttribute("aria-label", c.name);
    btn.setAttribute("aria-pressed", String(c.character_id === selected));
    btn.append(avatar(c));
    btn.addEventListener("click", () => onPick(c.character_id));
    return btn;
  }));
}

export function markSelected(container, id) {
  for (const btn of container.querySelectorAll("button")) {
    btn.setAttribute("aria-pressed", String(btn.dataset.character === id));
  }
}

export function mount(dropTarget, input, status, onImported) {
  async function importFile(file) {
    status.textContent = `importiere ${file.name} …`;
    try {
      const report = await upload("/characters", file);
      status.textContent = `${report.name} ${report.neu ? "importiert" : "war schon da"}`;
      pictures.delete(report.character_id);
      await onImported(report.character_id);
    } catch (err) {
      status.textContent = `nicht importiert: ${err.message}`;
    }
  }
  input.addEventListener("change", () => {
    if (input.files.length) importFile(input.files[0]);
    input.value = "";
  });
  dropTarget.addEventListener("dragover", (ev) => {
    if ([...ev.dataTransfer.types].includes("Files")) {
      ev.preventDefault();
      dropTarget.classList.add("dropping");
    }
  });
  dropTarget.addEventListener("dragleave", () => dropTarget.classList.remove("dropping"));
  dropTarget.addEventListener("drop", (ev) => {
    dropTarget.classList.remove("dropping");
    const file = ev.dataTransfer.files[0];
    if (!file) return;
    ev.preventDefault();
    importFile(file);
  });
}
