// The conversation history (GET /chats/{chat}/history, or GET /history/{character} for the
// open chat): the newest page on load, older pages when the list is scrolled to its top.
// Entries come oldest first.
"use strict";

import { enc, get } from "./api.js";

const PAGE = 30;

export class History {
  constructor(character, chat = null) {
    this.character = character;
    this.chat = chat;
    this.path = chat ? `/chats/${enc(chat)}/history` : `/history/${enc(character)}`;
    this.oldest = null;   // smallest row id loaded: the cursor of the next older page
    this.more = true;
    this.loading = null;
  }

  // The next older page (the newest one first); [] when there is nothing more.
  older() {
    if (!this.more) return Promise.resolve([]);
    if (this.loading) return this.loading;
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (this.oldest !== null) params.set("vor", String(this.oldest));
    this.loading = get(`${this.path}?${params}`).then((page) => {
      if (page.eintraege.length) this.oldest = page.eintraege[0].id;
      this.more = page.weitere;
      return page.eintraege;
    }).finally(() => { this.loading = null; });
    return this.loading;
  }
}
