// The conversation history (GET /chats/{chat}/history, or GET /history/{character} for the
// open chat): the newest page on load, older pages when the list is scrolled to its top.
// Entries come oldest first. In the pair's first chat, the chats imported for the character
// (GET /history/{character}/importiert) come before the live turns: once the live history
// is exhausted, the pages go on into them (entries `importiert`).
"use strict";

import { enc, get } from "./api.js";

const PAGE = 30;

export class History {
  constructor(character, chat = null, withImported = true) {
    this.character = character;
    this.chat = chat;
    this.livePath = chat ? `/chats/${enc(chat)}/history` : `/history/${enc(character)}`;
    this.importedPath = `/history/${enc(character)}/importiert`;
    this.withImported = withImported;
    this.oldest = null;    // smallest row id loaded: the cursor of the next older page
    this.more = true;
    this.loading = null;
    this.imported = false; // paging through the imported chats now
    this.count = 0;        // entries loaded so far, live and imported
  }

  // The next older page (the newest one first); [] when there is nothing more.
  older() {
    if (!this.more) return Promise.resolve([]);
    if (this.loading) return this.loading;
    this.loading = this.page().then(async (entries) => {
      // the live turns ended within this page: the imported ones follow at once
      if (!this.more && !this.imported && this.withImported) {
        this.imported = true;
        this.oldest = null;
        this.more = true;
        entries = (await this.page()).concat(entries);
      }
      this.count += entries.length;
      return entries;
    }).finally(() => { this.loading = null; });
    return this.loading;
  }

  async page() {
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (this.oldest !== null) params.set("vor", String(this.oldest));
    const page = await get(`${this.imported ? this.importedPath : this.livePath}?${params}`);
    if (page.eintraege.length) this.oldest = page.eintraege[0].id;
    this.more = page.weitere;
    return this.imported ? page.eintraege.map((e) => ({ ...e, importiert: true })) : page.eintraege;
  }
}
