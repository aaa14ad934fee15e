// weir's page: polls the JSON API and draws the selected job.
"use strict";

const POLL_MS = 1000;
const SVG = "http://www.w3.org/2000/svg";
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
let selected = decodeURIComponent(location.hash.slice(1));

function el(tag, attrs, ...kids) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
function fmt(n) {
  if (n === undefined || n === null) return "–";
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(2) + "G";
  if (a >= 1e6) return (n / 1e6).toFixed(2) + "M";
  if (a >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
function bpColour(b) { // 0 green → 1 red
  const h = Math.round(120 * (1 - Math.min(1, Math.max(0, b))));
  return `hsl(${h}, 65%, 72%)`;
}
async function get(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(path + ": " + r.status);
  return r.json();
}
function rows(tbody, list, cells) {
  tbody.replaceChildren(...list.map(x => el("tr", {}, ...cells(x).map(c => el("td", {}, c)))));
}

function drawJobs(jobs) {
  if (!selected && jobs.length) selected = jobs[0].name;
  document.getElementById("jobs").replaceChildren(...jobs.map(j =>
    el("a", { href: "#" + encodeURIComponent(j.name), class: j.name === selected ? "current" : "" }, `${j.name} (${j.state})`)));
}

function drawSummary(d) {
  const cards = [
    ["state", d.state], ["records in", fmt(d.records_in)], ["records out", fmt(d.records_out)],
    ["in/s", fmt(d.records_in_per_s)], ["out/s", fmt(d.records_out_per_s)],
    ["checkpoints", d.checkpoints], ["restarts", d.restarts], ["coordinator", d.coordinator || "–"],
  ];
  document.getElementById("summary").replaceChildren(...cards.map(([k, v]) =>
    el("div", { class: "card", "data-key": k }, el("div", { class: "v" }, v), el("div", { class: "k" }, k))));
}

// drawGraph lays operators out in columns by their distance from a source.
function drawGraph(d) {
  if (!d.operators.length) {
    document.getElementById("graph").replaceChildren(el("p", { class: "muted", id: "graph-elsewhere" },
      `node ${d.coordinator || "?"} coordinates this job: its page shows the graph, rates and key groups; here are its tasks' nodes and latest checkpoints.`));
    return;
  }
  const depth = {};
  d.operators.forEach(o => { depth[o.id] = 0; });
  for (let i = 0; i < d.operators.length; i++)
    for (const e of d.edges) depth[e.to] = Math.max(depth[e.to], depth[e.from] + 1);
  const cols = {};
  d.operators.forEach(o => { (cols[depth[o.id]] = cols[depth[o.id]] || []).push(o); });
  const W = 190, H = 78, GX = 70, GY = 24, pos = {};
  let maxRows = 1;
  Object.entries(cols).forEach(([c, ops]) => {
    maxRows = Math.max(maxRows, ops.length);
    ops.forEach((o, r) => { pos[o.id] = { x: 10 + c * (W + GX), y: 10 + r * (H + GY) }; });
  });
  const ncols = Object.keys(cols).length;
  const svg = el("svg:svg", { width: 20 + ncols * (W + GX) - GX, height: 20 + maxRows * (H + GY) - GY, id: "graph-svg" });
  const defs = el("svg:defs", {}, el("svg:marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
    el("svg:path", { d: "M0,0 L10,5 L0,10 z", fill: "#1d2330" })));
  svg.append(defs);
  for (const e of d.edges) {
    const a = pos[e.from], b = pos[e.to];
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
    svg.append(el("svg:path", { class: "edge", d: `M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}`, fill: "none", stroke: "#1d2330", "marker-end": "url(#arrow)" }));
    svg.append(el("svg:text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 5, "text-anchor": "middle", "font-size": 10, fill: "#6b7280" }, e.partitioner));
  }
  for (const o of d.operators) {
    const p = pos[o.id];
    const g = el("svg:g", { class: "op", "data-operator": o.name, "data-in-per-s": o.records_in_per_s, "data-backpressure": o.backpressure, transform: `translate(${p.x},${p.y})` });
    g.append(el("svg:rect", { width: W, height: H, fill: bpColour(o.backpressure) }));
    g.append(el("svg:text", { x: 8, y: 18, "font-weight": "bold", "font-size": 13 }, `${o.name}  ×${o.parallelism}`));
    g.append(el("svg:text", { x: 8, y: 36, "font-size": 11 }, `${o.kind}${o.keyed ? ", keyed" : ""}`));
    g.append(el("svg:text", { x: 8, y: 52, "font-size": 11, class: "rate" }, `in ${fmt(o.records_in_per_s)}/s  out ${fmt(o.records_out_per_s)}/s`));
    g.append(el("svg:text", { x: 8, y: 68, "font-size": 11, class: "bp" }, `backpressure ${(100 * o.backpressure).toFixed(0)} %`));
    g.append(el("svg:title", {}, `${o.name}: parallelism ${o.parallelism}, ${fmt(o.records_in_per_s)} records/s in, ${fmt(o.records_out_per_s)} out`));
    svg.append(g);
  }
  document.getElementById("graph").replaceChildren(svg);
}

function drawTasks(d) {
  rows(document.querySelector("#tasks tbody"), d.tasks, t => [t.name, t.node, t.phase || "–",
    t.live ? fmt(t.records_in) : "–", t.live ? fmt(t.records_in_per_s) : "–", t.live ? fmt(t.records_out_per_s) : "–",
    t.live ? (100 * t.backpressure).toFixed(0) + " %" : "–", t.live ? t.queued_buffers : "–", fmt(t.state_bytes), t.key_groups || "–"]);
}

// drawCheckpointChart: a bar per checkpoint (duration), alignment drawn inside it.
function drawCheckpointChart(cps) {
  const W = 760, H = 200, L = 56, B = 28, T = 10, R = 10;
  const svg = el("svg:svg", { width: W, height: H, id: "ckpt-svg" });
  const shown = cps.slice(-40);
  const top = Math.max(1, ...shown.map(c => c.duration_ms));
  const y = v => T + (H - T - B) * (1 - v / top);
  for (let i = 0; i <= 4; i++) {
    const v = top * i / 4;
    svg.append(el("svg:line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#eef0f3" }));
    svg.append(el("svg:text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 10 }, fmt(v)));
  }
  svg.append(el("svg:text", { x: 12, y: T + (H - B) / 2, "font-size": 10, transform: `rotate(-90 12 ${T + (H - B) / 2})`, "text-anchor": "middle" }, "ms"));
  const bw = (W - L - R) / Math.max(1, shown.length);
  shown.forEach((c, i) => {
    const x = L + i * bw + 1;
    svg.append(el("svg:rect", { class: "bar", "data-id": c.id, "data-duration-ms": c.duration_ms, x, y: y(c.duration_ms), width: Math.max(1, bw - 2), height: H - B - y(c.duration_ms),
      fill: c.mode === "unaligned" ? "#f28e2b" : "#4e79a7" }, el("svg:title", {}, `checkpoint ${c.id} (${c.mode}): ${c.duration_ms.toFixed(1)} ms, alignment ${c.alignment_ms.toFixed(1)} ms`)));
    svg.append(el("svg:rect", { x, y: y(c.alignment_ms), width: Math.max(1, bw - 2), height: H - B - y(c.alignment_ms), fill: "#1d2330", opacity: 0.35 }));
    if (shown.length <= 20 || i % Math.ceil(shown.length / 20) === 0)
      svg.append(el("svg:text", { x: x + bw / 2, y: H - B + 14, "text-anchor": "middle", "font-size": 10 }, c.id));
  });
  svg.append(el("svg:text", { x: (L + W) / 2, y: H - 2, "text-anchor": "middle", "font-size": 10 }, "checkpoint id"));
  const legend = el("div", { class: "legend" }, el("span", {}, el("i", { style: "background:#4e79a7" }), "aligned"),
    el("span", {}, el("i", { style: "background:#f28e2b" }), "unaligned"), el("span", {}, el("i", { style: "background:#1d2330;opacity:.35" }), "alignment"));
  document.getElementById("ckpt-chart").replaceChildren(svg, legend);
  rows(document.querySelector("#checkpoints tbody"), cps.slice(-15).reverse(), c => [c.id, c.mode + (c.final ? " (final)" : ""),
    c.duration_ms.toFixed(1), c.alignment_ms.toFixed(1), fmt(c.state_bytes), fmt(c.state_written_bytes), fmt(c.inflight_bytes), c.inflight_buffers]);
}

function drawFailures(d) {
  const f = d.failures, r = d.restores;
  const causes = f.causes.slice(-10).reverse().map(e => el("li", { class: "ev-failure" }, `${new Date(e.at).toLocaleTimeString()} ${e.task}: ${e.detail}`));
  document.getElementById("failures").replaceChildren(
    el("p", { id: "failure-counts" }, `${f.failures} failures, ${f.restarts} restarts, ${f.kills} chaos kills; recovery ${f.recovery_ms.length ? f.recovery_ms.map(v => v.toFixed(0)).join(", ") + " ms" : "–"}. `
      + `${r.count} task restores: ${fmt(r.local_bytes)} bytes local (${r.local_sections} sections), ${fmt(r.remote_bytes)} bytes remote (${r.remote_sections} sections).`),
    causes.length ? el("ul", {}, ...causes) : el("p", { class: "muted" }, "no failures"));
}

function drawKeyGroups(d) {
  const box = document.getElementById("kg-map");
  const parts = [];
  for (const m of d.key_groups) {
    const n = m.groups.length, cols = Math.min(32, n);
    const grid = el("div", { class: "kg", style: `grid-template-columns: repeat(${cols}, 14px)`, "data-operator": m.operator });
    const insts = new Map();
    for (const g of m.groups) {
      insts.set(g.instance, g.node);
      const local = (g.local_on || []).includes(g.node);
      grid.append(el("div", { class: "kg-cell" + (local ? " local" : ""), style: `background:${PALETTE[g.instance % PALETTE.length]}`,
        title: `key group ${g.group}: ${g.task} on ${g.node}; held locally on ${(g.local_on || []).join(", ") || "no node"}` }));
    }
    const legend = el("div", { class: "legend" }, ...[...insts.entries()].sort((a, b) => a[0] - b[0]).map(([i, node]) =>
      el("span", {}, el("i", { style: `background:${PALETTE[i % PALETTE.length]}` }), `${m.operator}[${i}] on ${node}`)));
    parts.push(el("h3", { class: "muted" }, `${m.operator}: ${n} key groups`), grid, legend);
  }
  box.replaceChildren(...(parts.length ? parts : [el("p", { class: "muted" }, "no keyed operator")]));
}

function drawNodes(nodes) {
  rows(document.querySelector("#nodes tbody"), nodes, n => [n.id, n.slots, n.used, n.heartbeat_age_s.toFixed(1), (n.jobs || []).join(", "),
    (n.held || []).map(h => `${h.job}/${h.operator}@${h.checkpoint}: ${h.key_groups.map(r => r[0] === r[1] ? r[0] : r[0] + "–" + r[1]).join(",")}`).join("; ") || "–"]);
}

function drawTimeline(d) {
  const evs = d.timeline;
  const box = document.getElementById("timeline");
  if (!evs.length) { box.replaceChildren(el("p", { class: "muted" }, "nothing yet")); return; }
  const W = 760, H = 60, L = 10, R = 10;
  const t0 = Date.parse(evs[0].at), t1 = Math.max(t0 + 1000, Date.parse(d.at));
  const x = t => L + (W - L - R) * (t - t0) / (t1 - t0);
  const colour = { failure: "#b91c1c", kill: "#b91c1c", restart: "#b45309", restore: "#1d4ed8", rescale: "#047857" };
  const svg = el("svg:svg", { width: W, height: H, id: "timeline-svg" });
  svg.append(el("svg:line", { x1: L, x2: W - R, y1: 30, y2: 30, stroke: "#6b7280" }));
  for (const e of evs) {
    const xe = x(Date.parse(e.at));
    svg.append(el("svg:circle", { cx: xe, cy: 30, r: 5, fill: colour[e.kind] || "#333" }, el("svg:title", {}, `${e.at} ${e.kind} ${e.task || ""} ${e.detail || ""}`)));
  }
  svg.append(el("svg:text", { x: L, y: 55, "font-size": 10 }, new Date(t0).toLocaleTimeString()));
  svg.append(el("svg:text", { x: W - R, y: 55, "font-size": 10, "text-anchor": "end" }, new Date(t1).toLocaleTimeString()));
  const list = el("ul", {}, ...evs.slice(-12).reverse().map(e => el("li", { class: "ev-" + e.kind }, `${new Date(e.at).toLocaleTimeString()} ${e.kind} ${e.task || ""} ${e.detail || ""}`)));
  box.replaceChildren(svg, list);
}

async function poll() {
  try {
    const jobs = await get("api/jobs");
    drawJobs(jobs);
    const nodes = await get("api/nodes");
    drawNodes(nodes);
    if (selected) {
      const d = await get("api/jobs/" + encodeURIComponent(selected));
      drawSummary(d); drawGraph(d); drawTasks(d); drawCheckpointChart(d.checkpoint_history);
      drawFailures(d); drawKeyGroups(d); drawTimeline(d);
    }
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (err) {
    document.getElementById("updated").textContent = "API unreachable: " + err.message;
  }
  setTimeout(poll, POLL_MS);
}
window.addEventListener("hashchange", () => { selected = decodeURIComponent(location.hash.slice(1)); });
poll();
