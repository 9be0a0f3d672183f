// HTTP calls of the page: every request carries the page's bearer token; an answer that
// is not 2xx becomes an Error whose message is the server's sentence in words (`meldung`),
// else the page's general sentence with the status — never a bare code; `code` keeps the
// machine code. Every request names the page's language (Accept-Language), so the
// server's sentences come in it.
"use strict";

import { language, t } from "./i18n.js";

export const session = { token: "" };

/** The headers every request of the page carries: its key and its language. */
export function headers(extra = {}) {
  return { Authorization: `Bearer ${session.token}`, "Accept-Language": language(), ...extra };
}

export async function call(method, path, body) {
  const init = { method, headers: headers() };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await reach(path, init);
  if (res.status === 204) return null;
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const detail = data && data.detail;
    const words = detail && typeof detail.meldung === "string" ? detail.meldung : "";
    // never a bare code: the server's sentence, else the page's general one
    const err = new Error(words || t("errors.request", { status: String(res.status) }));
    err.code = detail && detail.fehler;
    err.status = res.status;
    err.detail = detail && typeof detail.detail === "string" ? detail.detail : ""; // the sentence
    err.reason = (detail && detail.grund) || ""; // which rule refused it (a code), if said
    err.data = detail && typeof detail === "object" ? detail : null; // the whole error body
    err.field = detail && detail.feld; // the refused field, where the server names one
    throw err;
  }
  return data;
}

// fetch, with a lost connection said in words (the browser's own "Failed to fetch" is
// English and says nothing to a person)
async function reach(path, init) {
  try {
    return await fetch(path, init);
  } catch (err) {
    throw new Error(t("errors.network"));
  }
}

export const get = (path) => call("GET", path);

export const enc = encodeURIComponent;

// A file as the raw request body (a character card: PNG or JSON).
export async function upload(path, file) {
  const res = await reach(path, {
    method: "POST",
    headers: headers({ "Content-Type": file.type || "application/octet-stream" }),
    body: file,
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const detail = data && data.detail;
    throw new Error((detail && detail.meldung) || t("errors.request", { status: String(res.status) }));
  }
  return data;
}
