// SVG pictures of the emotion panel: a radar over the eight sectors of the emotion wheel
// and a timeline of arousal, each for both actors (Nova and the person).
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

// values: {actor: number[sectors]} in [0, 1]; labels: one per sector.
export function radar(labels, values, actors) {
  const size = 220, mid = size / 2, r = 70;
  const n = labels.length;
  const point = (i, v) => {
    const a = (Math.PI * 2 * i) / n - Math.PI / 2;
    return [mid + Math.cos(a) * r * v, mid + Math.sin(a) * r * v];
  };
  const summary = actors.map((a) => {
    const top = values[a.key].map((v, i) => [v, labels[i]]).filter(([v]) => v > 0)
      .sort((x, y) => y[0] - x[0]).slice(0, 2).map(([, l]) => l);
    return `${a.label}: ${top.length ? top.join(", ") : "noch nichts"}`;
  }).join("; ");
  const pic = svg(size, size, `Emotionsrad – ${summary}`);
  for (const ring of [0.33, 0.66, 1]) {
    pic.append(el("polygon", {
      points: labels.map((_, i) => point(i, ring).join(",")).join(" "), class: "grid",
    }));
  }
  labels.forEach((label, i) => {
    const [x, y] = point(i, 1);
    pic.append(el("line", { x1: mid, y1: mid, x2: x, y2: y, class: "grid" }));
    const [lx, ly] = point(i, 1.32);
    pic.append(el("text", { x: lx, y: ly, "text-anchor": "middle", "dominant-baseline": "middle", class: "axis" }, label));
  });
  for (const actor of actors) {
    const pts = values[actor.key].map((v, i) => point(i, Math.max(v, 0.02)).join(",")).join(" ");
    pic.append(el("polygon", { points: pts, class: `area ${actor.key}`, "data-actor": actor.key }));
  }
  return pic;
}

// series: {actor: [{t, v}]} with v in [0, 1] (null = not measured, left out).
export function timeline(series, actors) {
  const w = 260, h = 110, pad = 16;
  const all = actors.flatMap((a) => series[a.key].filter((p) => p.v !== null));
  const pic = svg(w, h, `Erregung über die Zeit – ${actors.map((a) => {
    const last = series[a.key].filter((p) => p.v !== null).at(-1);
    return `${a.label}: ${last ? last.v.toFixed(2) : "nicht gemessen"}`;
  }).join("; ")}`);
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
