// The page's words in the person's language. Every user-facing string lives in one
// catalogue per language (lang_de.js, lang_en.js: flat "area.name" keys, sorted, values
// with {placeholders}); modules ask for `t("area.name", {count: 3})`, the static page marks
// its elements with data-i18n attributes. The language is the one chosen in the settings,
// else the browser's (German for any de-*, English otherwise); dates, times and numbers
// follow it, never the browser's locale on its own (docs/behaviour/web.md#language).
"use strict";

import de from "./lang_de.js";
import en from "./lang_en.js";

export const LANGUAGES = { de, en };
const STORE_KEY = "novaberg-lang";
const LOCALES = { de: "de-DE", en: "en-GB" };
const listeners = new Set();

function browserLanguage() {
  const wanted = navigator.languages?.length ? navigator.languages : [navigator.language || "en"];
  for (const tag of wanted) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (base in LANGUAGES) return base;
  }
  return "en";
}

let current = (() => {
  const chosen = localStorage.getItem(STORE_KEY);
  return chosen in LANGUAGES ? chosen : browserLanguage();
})();

/** The UI language: "de" or "en". */
export const language = () => current;

/** The BCP 47 locale dates and numbers are written in. */
export const locale = () => LOCALES[current];

/** Whether the person chose a language (else it follows the browser). */
export const chosen = () => localStorage.getItem(STORE_KEY) in LANGUAGES;

/** Switch the page's language (null: follow the browser again) and re-render its words. */
export function setLanguage(lang) {
  if (lang in LANGUAGES) localStorage.setItem(STORE_KEY, lang);
  else localStorage.removeItem(STORE_KEY);
  current = lang in LANGUAGES ? lang : browserLanguage();
  translatePage();
  for (const listener of listeners) listener(current);
}

/** Call `listener(lang)` after every language change (for text a module drew itself). */
export function onLanguageChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Whether the catalogue has `key` (for codes from the server that may be new). */
export const has = (key) => key in LANGUAGES[current] || key in LANGUAGES.de;

/** The catalogue's text for `key` with {placeholders} filled; numbers in the UI locale.
 * A placeholder's value may itself be `{key, vars}`: that text, in the same language.
 * A key missing in the language falls back to German, then to the key itself (visible,
 * so a forgotten entry is seen, never silently blank). */
export function t(key, vars = {}) {
  const text = LANGUAGES[current][key] ?? LANGUAGES.de[key];
  if (text === undefined) {
    console.warn(`i18n: no text for ${key}`);
    return key;
  }
  return text.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!(name in vars)) return whole;
    const value = vars[name];
    if (value && typeof value === "object" && "key" in value) return t(value.key, value.vars);
    return typeof value === "number" ? formatNumber(value) : String(value);
  });
}

export const formatNumber = (n) => n.toLocaleString(locale());

/** "14:05" today, "03.12.2026 14:05" / "03/12/2026 14:05" on other days. */
export function formatTime(date) {
  const clock = date.toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit" });
  if (date.toDateString() === new Date().toDateString()) return clock;
  const day = date.toLocaleDateString(locale(), { day: "2-digit", month: "2-digit", year: "numeric" });
  return `${day} ${clock}`;
}

/** The day alone ("03.12.2026" / "03/12/2026"), for all-day entries. */
export function formatDate(date) {
  return date.toLocaleDateString(locale(), { day: "2-digit", month: "2-digit", year: "numeric" });
}

/** Date and time always in full ("03.12.2026 14:05"), for lists where "today" is not
 * implied. */
export function formatDateTime(date) {
  const clock = date.toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit" });
  return `${formatDate(date)} ${clock}`;
}

// data-i18n="key" sets the text; data-i18n-ATTR="key" sets that attribute
// (placeholder, aria-label, title, alt); data-i18n-vars (JSON) fills their placeholders.
// data-time (epoch ms) marks a <time> whose text is redrawn in the UI language.
const ATTRIBUTES = ["placeholder", "aria-label", "title", "alt"];

const varsOf = (el) => (el.dataset.i18nVars ? JSON.parse(el.dataset.i18nVars) : {});

/** Put the catalogue's words into every marked element under `root`. */
export function translatePage(root = document) {
  document.documentElement.lang = current;
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n, varsOf(el));
  for (const attr of ATTRIBUTES) {
    for (const el of root.querySelectorAll(`[data-i18n-${attr}]`)) {
      el.setAttribute(attr, t(el.getAttribute(`data-i18n-${attr}`), varsOf(el)));
    }
  }
  for (const el of root.querySelectorAll("time[data-time]")) {
    el.textContent = formatTime(new Date(Number(el.dataset.time)));
  }
}

function keep(el, vars) {
  if (vars && Object.keys(vars).length) el.dataset.i18nVars = JSON.stringify(vars);
  else delete el.dataset.i18nVars;
}

/** Give `el` the text of `key` and mark it, so a language change redraws it (JS-drawn
 * text: badges, status lines, buttons). Returns `el`. */
export function setText(el, key, vars = {}) {
  el.dataset.i18n = key;
  keep(el, vars);
  el.textContent = t(key, vars);
  return el;
}

/** The same for an attribute (aria-label, title, placeholder, alt). */
export function setAttr(el, attr, key, vars = {}) {
  el.setAttribute(`data-i18n-${attr}`, key);
  keep(el, vars);
  el.setAttribute(attr, t(key, vars));
  return el;
}

/** Take the mark off `el` (its text is no longer the catalogue's: a name, a server sentence). */
export function unmark(el) {
  delete el.dataset.i18n;
  delete el.dataset.i18nVars;
  return el;
}

/** A <time> for `date`, in the UI language now and after every change. */
export function timeElement(date) {
  const stamp = document.createElement("time");
  stamp.dateTime = date.toISOString();
  stamp.dataset.time = String(date.getTime());
  stamp.textContent = formatTime(date);
  return stamp;
}
