// A card character's greeting (its card's first_mes, `erste_nachricht`): shown on the page
// when its conversation is still empty, marked as the card's greeting. It is only shown —
// never stored in the history nor sent to the model as something the character said.
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
