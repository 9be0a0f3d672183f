// English words of the page (i18n.js). Same keys as lang_de.js, sorted; {name} placeholders.
export default {
  "connection.keyRefused": "The key was not accepted.",
  "connection.notSent": "not sent (no connection)",
  "connection.online": "connected",
  "connection.reconnecting": "disconnected – reconnecting …",
  "connection.refusedKey": "Key refused – please enter it again",
  "connection.signedOut": "not signed in – enter your key",
};
