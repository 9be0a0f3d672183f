// The character the page shows, for every module that names it or shows its face: its
// name wherever the page would say "Nova" (the emotion line and legend, the settings'
// texts, the input's placeholder, notices) and its avatar on its bubbles. app.js sets it
// when the picker changes or the character is edited; a module reads `characterName()`
// when it draws, or listens with `onCharacterChange`. Static text naming the character is
// marked `data-chars-text` (a catalogue key) or `data-i18n` with a `name` in `data-i18n-vars`, and
// filled from the catalogue with {name}.
"use strict";

import { onLanguageChange, t } from "./i18n.js";
import { avatar } from "./cards.js";

let current = { character_id: "nova", name: "Nova", avatar: false };
const listeners = new Set();

/** The shown character's name ("Nova" until the list is loaded). */
export const characterName = () => current.name;

/** The shown character as GET /characters lists it ({character_id, name, avatar, eigen}). */
export const currentCharacter = () => current;

/** Call `listener(character)` whenever the shown character (or its name) changes. */
export function onCharacterChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The shown character is now `c` (a GET /characters item); every name on the page follows. */
export function setCharacter(c) {
  current = { ...c, name: (c.name || c.character_id || "").trim() || c.character_id };
  nameTexts();
  for (const listener of listeners) listener(current);
}

/** The speaker line of the character's bubble: its avatar and its name. */
export function speaker() {
  const line = document.createElement("span");
  line.className = "speaker";
  const name = document.createElement("span");
  name.className = "speaker-name";
  name.textContent = current.name;
  line.append(avatar(current), name);
  return line;
}

// The page's static texts that name the character, and the input's placeholder.
function nameTexts(root = document) {
  const name = current.name;
  for (const el of root.querySelectorAll("[data-chars-text]")) {
    el.textContent = t(el.dataset.charsText, { name });
  }
  // catalogue texts of the page that carry the character's name as a placeholder
  for (const el of root.querySelectorAll("[data-i18n][data-i18n-vars]")) {
    const vars = JSON.parse(el.dataset.i18nVars);
    if (!("name" in vars)) continue;
    vars.name = name;
    el.dataset.i18nVars = JSON.stringify(vars);
    el.textContent = t(el.dataset.i18n, vars);
  }
  const input = document.getElementById("input");
  if (input) input.placeholder = t("chars.placeholder", { name });
}

onLanguageChange(() => nameTexts());
