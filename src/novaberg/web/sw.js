// The page's service worker (served at /sw.js, so it controls the whole page): it shows
// Nova's Web Push notifications and, on a click, opens the page at that conversation and
// message. The payload is what reach/push.py sends: {titel, text, url, character_id, seq}.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (ev) => ev.waitUntil(self.clients.claim()));

function read(data) {
  if (!data) return {};
  try { return data.json(); } catch { return { text: data.text() }; }
}

self.addEventListener("push", (ev) => {
  const note = read(ev.data);
  ev.waitUntil(self.registration.showNotification(note.titel || "Novaberg", {
    body: note.text || "",
    icon: "/web/icon.svg",
    tag: `novaberg-${note.character_id || ""}`, // one per character; a newer one replaces it
    renotify: true,
    data: { url: note.url || "/" },
  }));
});

// A window of the page is reused (navigated there) when one is open, else a new one opens.
self.addEventListener("notificationclick", (ev) => {
  ev.notification.close();
  const target = new URL(ev.notification.data?.url || "/", self.location.origin);
  if (target.origin !== self.location.origin) return; // only ever our own page
  ev.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    for (const win of windows) {
      try {
        const moved = await win.navigate(target.href);
        return (moved || win).focus();
      } catch { /* not ours to navigate: open a new one */ }
    }
    return self.clients.openWindow(target.href);
  })());
});
