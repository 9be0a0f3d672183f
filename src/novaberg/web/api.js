// HTTP calls of the page: every request carries the page's bearer token; an answer that
// is not 2xx becomes an Error whose message is the server's sentence in words (`meldung`),
// else its `fehler` code (or the status); `code` keeps the machine code.
"use strict";

export const session = { token: "" };

export async function call(method, path, body) {
  const init = { method, headers: { Authorization: `Bearer ${session.token}` } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.status === 204) return null;
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const detail = data && data.detail;
    const code = (detail && (detail.fehler || detail.detail)) || res.status;
    const words = detail && typeof detail.meldung === "string" ? detail.meldung : "";
    const err = new Error(words || (typeof code === "string" ? code : JSON.stringify(code)));
    err.code = detail && detail.fehler;
    err.status = res.status;
    err.detail = detail && typeof detail.detail === "string" ? detail.detail : ""; // the sentence
    err.field = detail && detail.feld; // the refused field, where the server names one
    throw err;
  }
  return data;
}

export const get = (path) => call("GET", path);

export const enc = encodeURIComponent;

// A file as the raw request body (a character card: PNG or JSON).
export async function upload(path, file) {
  const res = await fetch(path, {
    method: "POST",
    headers: { Authorization: `Bearer ${session.token}`, "Content-Type": file.type || "application/octet-stream" },
    body: file,
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const detail = data && data.detail;
    throw new Error((detail && (detail.meldung || detail.detail || detail.fehler)) || String(res.status));
  }
  return data;
}
