// The input box: what the person types is counted against the server's limit (GET
// /page/settings `text_max_bytes`, UTF-8 bytes), a warning shows before the limit, and a
// message that is refused — too long here already, or refused by the server with any 4xx
// — goes back into the box with the reason in words, never into a red bubble
// (docs/behaviour/web.md#the-input-box).
"use strict";

import { onLanguageChange, t } from "./i18n.js";

const WARN_SHARE = 0.9; // from here on the counter says how much is left

// Every string of the box is in the catalogues (composer.*); `tooLong` is the server's
// sentence for `text_zu_lang` (api/error_sentences.py), word for word.
const TEXT = {
  count: (chars) => t("composer.count", { chars }),
  countOf: (chars, limit) => t("composer.countOf", { chars, limit }),
  nearly: (left) => t("composer.nearly", { left }),
  over: (bytes, limit) => t("composer.over", { bytes, limit }),
  tooLong: (limit) => t("composer.tooLong", { kib: Math.floor(limit / 1024), limit }),
};

/** The sentence for a refusal the server did not put in words. */
export const refusedText = (status) => t("composer.refused", { status: String(status) });

const box = { input: null, counter: null, reason: null, limit: null };
const encoder = new TextEncoder();

// UTF-8 size, but never more than one past the limit is measured (a 2 MB paste is over
// by its length alone: a character is at least one byte).
function size(text) {
  if (box.limit !== null && text.length > box.limit) return text.length;
  return encoder.encode(text).length;
}

export function mount(input, counter, reason) {
  Object.assign(box, { input, counter, reason });
  input.setAttribute("aria-describedby", `${counter.id} ${reason.id}`);
  input.addEventListener("input", update);
  onLanguageChange(update);
  update();
}

export function setLimit(bytes) {
  box.limit = Number.isFinite(bytes) && bytes > 0 ? bytes : null;
  update();
}

// The sentence that refuses `text` before it is sent, or "".
export function refusal(text) {
  return box.limit !== null && size(text) > box.limit ? TEXT.tooLong(box.limit) : "";
}

function update() {
  const text = box.input.value;
  const bytes = size(text);
  let state = "";
  if (box.limit === null) box.counter.textContent = TEXT.count(text.length);
  else if (bytes > box.limit) {
    state = "over";
    box.counter.textContent = TEXT.over(bytes, box.limit);
  } else if (bytes >= box.limit * WARN_SHARE) {
    state = "near";
    box.counter.textContent = TEXT.nearly(box.limit - bytes);
  } else box.counter.textContent = TEXT.countOf(text.length, box.limit);
  box.counter.dataset.state = state;
  if (state === "over") showReason(TEXT.tooLong(box.limit));
  else if (box.reason.dataset.cause === "length") showReason("");
}

export function showReason(sentence, cause = "length") {
  box.reason.textContent = sentence;
  box.reason.hidden = !sentence;
  box.reason.dataset.cause = sentence ? cause : "";
  if (sentence) box.input.setAttribute("aria-invalid", "true");
  else box.input.removeAttribute("aria-invalid");
}

// A refused message back into the box with its reason. Only into an empty box (the
// person may have typed the next one meanwhile): returns whether it went back.
export function giveBack(text, sentence) {
  if (box.input.value.trim()) return false;
  box.input.value = text;
  update();
  showReason(sentence, "refused");
  box.input.focus();
  return true;
}

// The box was sent: its reason (if any) is settled.
export function sent() {
  showReason("");
  update();
}
