// Novaberg chat page: POST /chat to write, one WebSocket (/ws) to hear everything.
// No build step. Answers are placed by the nachrichten_ids they name
// (docs/behaviour/events.md#release): the tab keeps the set of ids it sent; an answer
// naming only ids it never sent came from another device of the same user.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.content || "";

  const state = {
    token: meta("novaberg-token") || localStorage.getItem("novaberg-token") || "",
    character: meta("novaberg-character") || "nova",
    clientId: sessionStorage.getItem("novaberg-client") || crypto.randomUUID().replace(/-/g, ""),
    lastSeq: null,        // highest seq seen; reconnects ask for what came after
    mine: new Set(),      // nachrichten_ids this tab sent (and had acknowledged)
    rows: new Map(),      // nachrichten_id -> <li> of an utterance shown here (any device)
    open: new Set(),      // my ids still waiting for an outcome
    inflight: new Set(),  // POSTs not yet acknowledged (their ids are unknown so far)
    answered: new Set(),  // turn ids whose outcome arrived: their post-run stays off the line
    socket: null,
    retryDelay: 500,
  };
  sessionStorage.setItem("novaberg-client", state.clientId);
  $("character-name").textContent = "· " + state.character;

  // ---------- rendering ----------

  function bubble(kind, text, metaText) {
    const li = document.createElement("li");
    li.className = `msg ${kind}`;
    const body = document.createElement("span");
    body.className = "text";
    body.textContent = text;
    li.append(body);
    const m = document.createElement("span");
    m.className = "meta";
    m.textContent = metaText || "";
    li.append(m);
    return li;
  }

  function scrollDown() {
    const list = $("messages");
    list.scrollTop = list.scrollHeight;
  }

  function append(li) {
    $("messages").append(li);
    scrollDown();
    return li;
  }

  // Place `li` after the last of my utterances it refers to (and after any answers
  // already following it); otherwise at the end.
  function placeAfter(ids, li) {
    const anchors = ids.map((id) => state.rows.get(id)).filter(Boolean);
    if (!anchors.length) return append(li);
    let anchor = anchors.reduce((a, b) =>
      a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? b : a);
    while (anchor.nextElementSibling && !anchor.nextElementSibling.classList.contains("user")) {
      anchor = anchor.nextElementSibling;
    }
    anchor.after(li);
    scrollDown();
    return li;
  }

  function time(ts) {
    const d = ts ? new Date(ts * 1000) : new Date();
    return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  function showStage(text) {
    $("stage-text").textContent = text;
    $("stage").hidden = !text;
  }

  function showError(text) {
    $("error").textContent = text || "";
    $("error").hidden = !text;
  }

  function updatePanel(msg) {
    const emotion = msg.emotion || msg.nova_emotion;
    const arousal = typeof msg.arousal === "number" ? msg.arousal
      : (typeof msg.nova_arousal === "number" ? msg.nova_arousal : null);
    $("emotion").textContent = emotion || "– (nicht gemessen)";
    $("arousal").textContent = arousal === null ? "– (nicht gemessen)" : arousal.toFixed(2);
    $("arousal-bar").style.width = arousal === null ? "0" : `${Math.round(arousal * 100)}%`;
    $("vector").textContent = msg.emotions_vektor || "– (nicht gemessen)";
    const conflict = msg.nova_emotion_konflikt;
    $("conflict").textContent = conflict === undefined || conflict === null ? "–"
      : (typeof conflict === "object" ? JSON.stringify(conflict) : String(conflict));
  }

  // ---------- sending ----------

  async function send(text) {
    const li = append(bubble("user pending", text, time()));
    const pending = {};
    const done = new Promise((resolve) => (pending.resolve = resolve));
    state.inflight.add(done);
    try {
      const res = await fetch("/chat", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${state.token}` },
        body: JSON.stringify({ character_id: state.character, text, client_id: state.clientId }),
      });
      const body = await res.json().catch(() => ({}));
      if (res.status === 401) return askToken(li, text);
      if (res.status !== 202) {
        li.classList.remove("pending");
        li.classList.add("failed");
        li.querySelector(".meta").textContent = `nicht angenommen: ${body.detail || res.status}`;
        return;
      }
      li.dataset.id = body.nachrichten_id;
      li.dataset.text = text;
      state.mine.add(body.nachrichten_id);
      state.rows.set(body.nachrichten_id, li);
      state.open.add(body.nachrichten_id);
    } catch (err) {
      li.classList.remove("pending");
      li.classList.add("failed");
      li.querySelector(".meta").textContent = "nicht gesendet (keine Verbindung)";
      addRetry(li, [text]);
    } finally {
      state.inflight.delete(done);
      pending.resolve();
    }
  }

  function addRetry(li, texts) {
    if (li.querySelector(".retry")) return;
    const btn = document.createElement("button");
    btn.className = "retry";
    btn.type = "button";
    btn.textContent = "Erneut senden";
    btn.addEventListener("click", () => {
      btn.remove();
      li.classList.add("resent");
      texts.forEach((t) => send(t));
    });
    li.querySelector(".meta").append(btn);
  }

  // ---------- receiving ----------

  async function settleInflight() {
    // An answer can only name ids of this tab once their POSTs were acknowledged.
    while (state.inflight.size) await Promise.all([...state.inflight]);
  }

  async function onResponse(msg) {
    const ids = msg.nachrichten_ids || [];
    if (ids.some((id) => !state.mine.has(id))) await settleInflight();
    const ours = ids.filter((id) => state.mine.has(id));
    const impulse = msg.reiz_herkunft === "eigener_impuls";
    const li = bubble("nova" + (impulse ? " impulse" : ""), msg.nachricht || "", time(msg.gesendet_am));
    li.dataset.turn = msg.turn_id;
    if (impulse) badge(li, "💭 eigener Gedanke");
    else if (!ids.length) badge(li, "schreibt weiter");
    else if (!ours.length) badge(li, "Antwort an ein anderes Gerät");
    ours.forEach((id) => {
      state.open.delete(id);
      state.rows.get(id).classList.remove("pending");
    });
    if (ids.some((id) => state.rows.has(id))) placeAfter(ids, li);
    else append(li);
    li.dataset.ids = ids.join(",");
    state.answered.add(msg.turn_id);
    updatePanel(msg);
    showStage("");
  }

  async function onFailed(msg) {
    const ids = msg.nachrichten_ids || [];
    if (ids.some((id) => !state.mine.has(id))) await settleInflight();
    const ours = ids.filter((id) => state.mine.has(id));
    state.answered.add(msg.turn_id);
    showStage("");
    if (!ours.length) {
      const note = bubble("notice", ids.length
        ? `Ein Turn von einem anderen Gerät ist gescheitert (${msg.grund}).`
        : `Nova konnte nicht weiterschreiben (${msg.grund}).`);
      append(note);
      return;
    }
    ours.forEach((id) => {
      state.open.delete(id);
      const li = state.rows.get(id);
      li.classList.remove("pending");
      li.classList.add("failed");
      li.querySelector(".meta").textContent = `keine Antwort: ${msg.grund}`;
    });
    const last = state.rows.get(ours[ours.length - 1]);
    addRetry(last, ours.map((id) => state.rows.get(id).dataset.text));
    last.dataset.failedTurn = msg.turn_id;
  }

  function onUtterance(msg) {
    if ((msg.client_ids || []).includes(state.clientId)) return;
    for (const u of msg.aeusserungen || []) {
      if (state.rows.has(u.nachrichten_id)) continue;
      const li = bubble("user other", u.prompt, time(u.empfangen_am));
      badge(li, "von einem anderen Gerät");
      li.dataset.id = u.nachrichten_id;
      state.rows.set(u.nachrichten_id, li); // answers to it are placed after it
      append(li);
    }
  }

  function badge(li, text) {
    const b = document.createElement("span");
    b.className = "badge";
    b.textContent = text;
    li.prepend(b);
  }

  function onMessage(msg) {
    if (typeof msg.seq === "number") {
      if (state.lastSeq !== null && msg.seq <= state.lastSeq) return; // already seen
      state.lastSeq = msg.seq;
    }
    if (msg.character_id && msg.character_id !== state.character) return;
    switch (msg.typ) {
      case "verbindung":
        if (state.lastSeq === null) state.lastSeq = msg.seq_aktuell;
        break;
      case "character_stage":
        if (state.answered.has(msg.turn_id)) break; // post-run after the answer: no stage line
        showStage(`${state.character === "nova" ? "Nova" : state.character} ${msg.label} …`);
        break;
      case "character_response":
        onResponse(msg);
        break;
      case "turn_gescheitert":
        onFailed(msg);
        break;
      case "user_utterance":
        onUtterance(msg);
        break;
    }
  }

  function connect() {
    if (!state.token) return askToken();
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const params = new URLSearchParams({ token: state.token, client_id: state.clientId });
    if (state.lastSeq !== null) params.set("since", String(state.lastSeq));
    const ws = new WebSocket(`${proto}://${location.host}/ws?${params}`);
    state.socket = ws;
    ws.onopen = () => {
      state.retryDelay = 500;
      $("connection").textContent = "verbunden";
      $("connection").className = "connection online";
    };
    ws.onmessage = (ev) => {
      try { onMessage(JSON.parse(ev.data)); } catch (err) { console.error(err); }
    };
    ws.onclose = (ev) => {
      $("connection").textContent = "getrennt – verbinde neu …";
      $("connection").className = "connection offline";
      if (ev.code === 4401) return askToken();
      if (ev.code === 4400) state.lastSeq = null; // a bad resume point: start afresh
      setTimeout(connect, state.retryDelay);
      state.retryDelay = Math.min(state.retryDelay * 2, 10000);
    };
  }

  function askToken(li, text) {
    if (li) li.remove();
    localStorage.removeItem("novaberg-token");
    const dlg = $("login");
    if (dlg.open) return;
    dlg.showModal();
    $("login-form").onsubmit = () => {
      state.token = $("token-input").value.trim();
      localStorage.setItem("novaberg-token", state.token);
      if (state.socket) state.socket.close();
      else connect();
      if (text) send(text);
    };
  }

  // ---------- wiring ----------

  $("composer").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("input").value;
    if (!text.trim()) return;
    $("input").value = "";
    showError("");
    send(text);
  });
  $("input").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      $("composer").requestSubmit();
    }
  });

  window.novaberg = state; // for debugging and the browser test
  connect();
})();
