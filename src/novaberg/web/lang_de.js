// German words of the page (i18n.js). Flat "area.name" keys, sorted; {name} placeholders.
export default {
  "connection.keyRefused": "Der Schlüssel wurde nicht angenommen.",
  "connection.notSent": "nicht gesendet (keine Verbindung)",
  "connection.online": "verbunden",
  "connection.reconnecting": "getrennt – verbinde neu …",
  "connection.refusedKey": "Schlüssel abgelehnt – bitte neu eingeben",
  "connection.signedOut": "nicht angemeldet – Schlüssel eingeben",
};
