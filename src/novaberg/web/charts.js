// SVG pictures of the emotion panel: a radar over the eight sectors of the emotion wheel
// and a timeline of arousal, each for both actors (the character and the person). The
// caller passes every word (axis names, labels, the accessible summary), so the pictures
// follow the page's language without knowing it.
"use strict";

const NS = "http://www.w3.org/2000/svg";

function el(name, attrs, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(width, height, label) {
  return el("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label, class: "chart" });
}

// The side a label sits on decides its anchor, so long words grow away from the wheel
// instead of past the picture's edge.
const anchor = (x, mid) => (x > mid + 1 ? "start" : x < mid - 1 ? "end" : "middle");

/** values: {actor: number[sectors]} in [0, 1]; axes: one {label, named: [actor keys]} per
 * sector — a named axis carries the emotion the panel's sentence names and is marked;
 * centre: the same for the sectorless neutral (null: not named); label: the picture's
 * accessible name. */
export function radar(axes, values, actors, label, centre = null) {
  const width = 300, height = 230, mid = width / 2, midY = height / 2, r = 70;
  const n = axes.length;
  const point = (i, v) => {
    const a = (Math.PI * 2 * i) / n - Math.PI / 2;
    return [mid + Math.cos(a) * r * v, midY + Math.sin(a) * r * v];
  };
  const pic = svg(width, height, label);
  for (const ring of [0.33, 0.66, 1]) {
    pic.append(el("polygon", {
      points: axes.map((_, i) => point(i, ring).join(",")).join(" "), class: "grid",
    }));
  }
  axes.forEach((axis, i) => {
    const [x, y] = point(i, 1);
    pic.append(el("line", { x1: mid, y1: midY, x2: x, y2: y, class: "grid" }));
    const [lx, ly] = point(i, 1.16);
    const named = axis.named.length > 0;
    const text = el("text", {
      x: lx, y: ly, "text-anchor": anchor(lx, mid), "dominant-baseline": "middle",
      class: named ? `axis named ${axis.named.join(" ")}` : "axis",
    }, axis.label);
    if (named) {
      text.dataset.emotion = axis.emotions.join(" ");
      axis.named.forEach((key, k) => {
        pic.append(el("circle", { cx: x + k * 9, cy: y, r: 4.5, class: `mark ${key}`, "data-actor": key }));
      });
    }
    pic.append(text);
  });
  for (const actor of actors) {
    const pts = values[actor.key].map((v, i) => point(i, Math.max(v, 0.02)).join(",")).join(" ");
    pic.append(el("polygon", { points: pts, class: `area ${actor.key}`, "data-actor": actor.key }));
  }
  if (centre) {
    const text = el("text", {
      x: mid, y: midY, "text-anchor": "middle", "dominant-baseline": "middle",
      class: `axis named centre ${centre.named.join(" ")}`,
    }, centre.label);
    text.dataset.emotion = centre.emotions.join(" ");
    pic.append(text);
  }
  return pic;
}

/** series: {actor: [{t, v}]} with v in [0, 1] (null = not measured, left out). */
export function timeline(series, actors, label) {
  const w = 260, h = 110, pad = 16;
  const all = actors.flatMap((a) => series[a.key].filter((p) => p.v !== null));
  const pic = svg(w, h, label);
  pic.append(el("line", { x1: pad, y1: h - pad, x2: w - 4, y2: h - pad, class: "grid" }));
  pic.append(el("line", { x1: pad, y1: 4, x2: pad, y2: h - pad, class: "grid" }));
  pic.append(el("text", { x: 2, y: 10, class: "axis" }, "1"));
  pic.append(el("text", { x: 2, y: h - pad, class: "axis" }, "0"));
  if (!all.length) return pic;
  const t0 = Math.min(...all.map((p) => p.t)), t1 = Math.max(...all.map((p) => p.t));
  const x = (t) => (t1 === t0 ? (w + pad) / 2 : pad + ((t - t0) / (t1 - t0)) * (w - pad - 8));
  const y = (v) => h - pad - v * (h - pad - 6);
  for (const actor of actors) {
    const pts = series[actor.key].filter((p) => p.v !== null);
    if (!pts.length) continue;
    pic.append(el("polyline", {
      points: pts.map((p) => `${x(p.t)},${y(p.v)}`).join(" "), class: `line ${actor.key}`,
      "data-actor": actor.key, "data-points": pts.length,
    }));
    for (const p of pts) pic.append(el("circle", { cx: x(p.t), cy: y(p.v), r: 2.5, class: `dot ${actor.key}` }));
  }
  return pic;
}
