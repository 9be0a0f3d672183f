// What an answer says beyond its text (docs/behaviour/web.md#the-page): a question that
// waits for the person's reply (`erwartet_antwort`, the event kind awaiting_user) gets the badge
// "Rückfrage" and, for a yes/no question, the buttons Ja and Nein — a click sends the word
// as an ordinary message; and every change the turn stored (`aenderungen`) gets a receipt
// line under the answer that opens the tasks panel at its list.
"use strict";

import { setAttr, setText, t } from "./i18n.js";

const YES_NO = "ja_nein";

// agent (wire name) -> section of the tasks panel (its data-kind)
const SECTIONS = {
  notizen: "notes",
  timeline: "timeline",
  direktiven: "directives",
  charakter_identitaet: "identity",
  dateien_wurzeln: "library",
};

// Add the question's buttons and the receipts to the answer `li`.
// `answer(text)` sends a reply; `openTasks(kind)` shows the tasks panel at a section.
export function decorate(li, msg, { answer, openTasks }) {
  const awaited = msg.erwartet_antwort;
  if (awaited && typeof awaited === "object") {
    li.classList.add("asks");
    badge(li, "answers.question");
    if (awaited.art === YES_NO) li.insertBefore(yesNo(answer), li.querySelector(".meta"));
  }
  const changes = (msg.aenderungen || []).filter((c) => c && c.text);
  if (changes.length) li.insertBefore(receipts(changes, openTasks), li.querySelector(".meta"));
}

// A reply was sent (by a button or typed): no open question keeps its buttons.
export function settleQuestions(list) {
  for (const group of list.querySelectorAll(".quick-answers")) group.remove();
}

function badge(li, key) {
  const b = document.createElement("span");
  b.className = "badge";
  setText(b, key);
  li.prepend(b);
}

function yesNo(answer) {
  const group = document.createElement("div");
  group.className = "quick-answers";
  group.setAttribute("role", "group");
  setAttr(group, "aria-label", "answers.quickLabel");
  group.dataset.testid = "quick-answers";
  for (const key of ["answers.yes", "answers.no"]) {
    const btn = document.createElement("button");
    btn.type = "button";
    setText(btn, key);
    // the word as shown now is sent (the agents understand yes and no in both languages)
    btn.addEventListener("click", () => answer(t(key)));
    group.append(btn);
  }
  return group;
}

function receipts(changes, openTasks) {
  const list = document.createElement("ul");
  list.className = "receipts";
  setAttr(list, "aria-label", "answers.saved");
  list.dataset.testid = "receipts";
  for (const change of changes) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    const kind = SECTIONS[change.agent] || "notes";
    link.href = "#panel-tasks";
    link.dataset.kind = kind;
    link.textContent = `✓ ${change.text}`;
    setAttr(link, "title", "answers.showInTasks");
    link.addEventListener("click", (ev) => {
      ev.preventDefault();
      openTasks(kind);
    });
    item.append(link);
    list.append(item);
  }
  return list;
}
