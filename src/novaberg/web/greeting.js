// A card character's greetings (its card's first_mes, `erste_nachricht`, and its alternate
// greetings) as text: the names filled in, the list the page browses. Pure functions, no
// DOM (tests/unit/web run them in node); the bubble is greeting_bubble.js.
"use strict";

// The card placeholders, as the server fills them into a persona (agents/turn_context.py).
const MACROS = [
  [/\{\{char\}\}/gi, "char"],
  [/<bot>/gi, "char"],
  [/\{\{user\}\}/gi, "user"],
  [/<user>/gi, "user"],
];

// `text` with {{char}}/<bot> replaced by `names.char` and {{user}}/<user> by `names.user`.
export function fillNames(text, names) {
  let out = String(text);
  for (const [pattern, whose] of MACROS) out = out.replace(pattern, () => names[whose]);
  return out;
}

// The greetings a card offers: its first (`erste_nachricht`), then its alternate ones
// (`weitere_begruessungen`, V2/V3 `alternate_greetings`), blank ones left out.
export function greetingsOf(character) {
  return [character.erste_nachricht, ...(character.weitere_begruessungen || [])]
    .map((text) => String(text || "").trim())
    .filter(Boolean);
}
