// A turn of a chat imported for the character (GET /history/{character}/importiert), shown
// before the live turns: on the side of its speaker, with the name the export gave (else
// the character's or the person's), marked "importiert" with its format. Read only: it
// never gets the controls of a live turn (no inspector, no retry).
"use strict";

import { characterName } from "./character.js";
import { t } from "./i18n.js";

// `bubble(kind, text, ts, markdown)` is the page's bubble maker (app.js).
export function importedEntry(e, bubble, me) {
  const character = e.sprecher === "character";
  const li = bubble(`${character ? "nova" : "user"} history imported`, e.text, e.zeit, character);
  li.dataset.testid = "imported-turn";
  const who = document.createElement("span");
  who.className = "speaker imported-speaker";
  const name = document.createElement("span");
  name.className = "speaker-name";
  name.textContent = e.name || (character ? characterName() : me);
  const mark = document.createElement("span");
  mark.className = "badge";
  mark.textContent = t("chars.importedFrom", { source: e.quelle });
  who.append(name, mark);
  li.prepend(who);
  return li;
}
