// The greeting bubble: a card's greeting shown on an empty conversation, marked as the
// card's, browsable ("‹ 1/3 ›") when there are several. Until the person answers it is only
// shown; the one they answer becomes the conversation's opening (POST
// /characters/{id}/opening): stored in the history and known to the model from then on.
"use strict";

import { call, enc } from "./api.js";
import { fillNames, greetingsOf } from "./greeting.js";
import { onLanguageChange, t } from "./i18n.js";

// The greeting bubble of `character` for the person `user`: the first greeting, and with
// more than one a "‹ 1/3 ›" group under it to browse them; `li.dataset.greetingIndex`
// is the one the person sees (and will answer). `draw` gives the page's bubble parts:
// {bubble(kind, text, ts, markdown), badge(li, text), render(text) -> html}.
export function greetingBubble(character, user, draw) {
  const texts = greetingsOf(character).map((text) => fillNames(text, { char: character.name, user }));
  if (!texts.length) return null;
  const li = draw.bubble("card-greeting", texts[0], null, true);
  li.dataset.testid = "card-greeting";
  li.dataset.greetingIndex = "0";
  li.dataset.greetings = String(texts.length);
  const label = document.createElement("span");
  label.className = "badge";
  li.prepend(label);
  let browse = null;
  const redraw = () => {
    const at = Number(li.dataset.greetingIndex);
    label.textContent = `👋 ${t("chars.greetingBadge", { name: character.name })}`;
    if (!browse) return;
    browse.setAttribute("aria-label", t("chars.greetingChoice"));
    const [back, position, next] = browse.children;
    back.setAttribute("aria-label", t("chars.greetingPrevious"));
    next.setAttribute("aria-label", t("chars.greetingNext"));
    back.disabled = at === 0;
    next.disabled = at === texts.length - 1;
    position.textContent = t("chars.greetingPosition", { at: at + 1, of: texts.length });
  };
  if (texts.length > 1) {
    browse = document.createElement("span");
    browse.className = "greeting-browse";
    browse.setAttribute("role", "group");
    browse.dataset.testid = "greeting-browse";
    const step = (by) => {
      const at = Math.min(texts.length - 1, Math.max(0, Number(li.dataset.greetingIndex) + by));
      li.dataset.greetingIndex = String(at);
      li.querySelector(".text").innerHTML = draw.render(texts[at]); // escaped inside
      redraw();
    };
    const button = (text, by) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "small";
      b.textContent = text;
      b.addEventListener("click", () => step(by));
      return b;
    };
    const position = document.createElement("span");
    position.dataset.testid = "greeting-position";
    position.setAttribute("aria-live", "polite");
    browse.append(button("‹", -1), position, button("›", 1));
    li.querySelector(".meta").append(browse);
  }
  redraw();
  const stop = onLanguageChange(() => (li.isConnected ? redraw() : stop()));
  return li;
}

// The person answers: the greeting they see (if any, not yet recorded) becomes the
// conversation's opening — stored by the server (POST /characters/{id}/opening), so the
// history keeps it and the model reads it before their answer. It stays where it is, no
// longer browsable. A failure to record it never holds the message back.
export async function keepAnswered(list, characterId) {
  const li = list.querySelector(".card-greeting:not(.answered)");
  if (!li) return;
  li.classList.add("answered");
  li.querySelector(".greeting-browse")?.remove();
  try {
    await call("POST", `/characters/${enc(characterId)}/opening`, {
      begruessung: Number(li.dataset.greetingIndex || 0),
    });
  } catch (err) {
    console.warn("the greeting was not kept as the opening", err);
  }
}
