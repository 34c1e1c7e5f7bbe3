// The drawing: the graph laid out with dagre, an actor as a box coloured by
// where it runs, with its kind as a badge and its ports labelled, a channel
// as an arrow with its rates, capacity and initial tokens; check's findings
// painted on it (blocked actors, deadlocked cycles, channels to initialise,
// the bottleneck). The layers are folded into groups, labelled, that the
// overview shows (see view.js's levels of detail); a big graph's boxes get
// their text (the "detail") only once they are in view at a legible zoom.
import dagre from "dagre";
import { state, $, el, html } from "./common.js";
import { quickLayout } from "./quick.js";

const HEAD = 28, ROW = 20, FOOT = 40, PAD = 10;
// BIG is the most actors drawn with their channels' labels.
export const BIG = 64;
// textWidth estimates the width of s in px at a font size (sans-serif).
const textWidth = (s, px) => s.length * px * 0.58;

// KINDS are the badges by actor kind.
export const KINDS = { go: "Go", builtin: "built-in", kernel: "kernel", flowmodel: "flow-model", composite: "composite", conditional: "cond", synthetic: "cost" };

// placeOf is where the actor at path runs: its mapped device, or the CPU.
export function placeOf(path) {
  const p = state.mapping && state.mapping[path];
  const d = (p && p.device) || "cpu";
  return d === "" ? "cpu" : d;
}

// placeColour gives each placement a colour: the CPU blue, CUDA devices
// greens, OpenCL devices oranges, anything else (remote workers) purples;
// devices of one family differ in lightness.
export function placeColour(dev) {
  if (dev === "cpu") return "#3b6ea8";
  const n = parseInt((dev.match(/\d+/g) || ["0"]).join(""), 10) || 0;
  const light = 34 + (n % 4) * 8;
  if (dev.startsWith("cuda")) return "hsl(140,55%," + light + "%)";
  if (dev.startsWith("opencl")) return "hsl(28,80%," + light + "%)";
  let h = 0;
  for (const c of dev) h = (h * 31 + c.charCodeAt(0)) % 60;
  return "hsl(" + (260 + h) + ",45%," + light + "%)";
}

// collect walks the graph and the expanded composites: the actors to draw
// (path names, "comp/inner" inside composites), the clusters (expanded
// composites with their parent) and the channels with both ends resolved
// to drawn actors' ports.
function collect(g) {
  const nodes = [], clusters = [], edges = [];
  const byPath = {};
  const walk = (g, prefix, parent) => {
    for (const a of g.actors) {
      const path = prefix + a.name;
      byPath[path] = a;
      if (a.sub && state.expanded.has(path)) {
        clusters.push({ path, actor: a, parent });
        walk(a.sub, path + "/", path);
      } else nodes.push({ path, actor: a, parent });
    }
    for (const c of g.channels) edges.push({ channel: c, prefix, from: resolve(prefix, c.from, "out"), to: resolve(prefix, c.to, "in") });
  };
  // resolve follows an end "a.p" into expanded composites: a composite's
  // port is bound to its subgraph's input or output of the same name.
  const resolve = (prefix, end, dir) => {
    const dot = end.indexOf(".");
    const path = prefix + end.slice(0, dot), port = end.slice(dot + 1);
    const a = byPath[path] || findActor(g, path);
    if (a && a.sub && state.expanded.has(path)) {
      const inner = ((dir === "out" ? a.sub.outputs : a.sub.inputs) || []).find((x) => x.name === port);
      if (inner) return resolve(path + "/", inner.port, dir);
    }
    return { node: path, port };
  };
  walk(g, "", null);
  return { nodes, clusters, edges };
}

// findActor finds the actor at a path ("a/b/c") in g.
export function findActor(g, path) {
  let a = null;
  for (const name of path.split("/")) {
    if (!g) return null;
    a = g.actors.find((x) => x.name === name);
    g = a && a.sub;
  }
  return a;
}

// footText is the box's last line: where it runs, replicas, repetitions.
function footText(path, report) {
  const p = state.mapping && state.mapping[path];
  let s = placeOf(path) + (p && p.replicas > 1 ? " ×" + p.replicas : "");
  if (report && report.repetitions && report.repetitions[path] !== undefined) s += " · q=" + report.repetitions[path];
  return s;
}

// boxSize is an actor box's width and height: the header with its name and
// badge, a row per port pair, the foot with placement and figures.
function boxSize(path, a, report) {
  const name = path.split("/").pop();
  const head = textWidth(name, 14) + textWidth(KINDS[a.kind] || "", 12) + 44 + (a.sub ? 20 : 0);
  const inW = Math.max(0, ...a.inputs.map((p) => textWidth(p.name, 12)));
  const outW = Math.max(0, ...a.outputs.map((p) => textWidth(p.name, 12)));
  const body = inW + outW + 50;
  const foot = textWidth(footText(path, report), 12) + 2 * PAD;
  const rows = Math.max(1, a.inputs.length, a.outputs.length);
  return { width: Math.max(116, head, body, foot), height: HEAD + rows * ROW + 6 + FOOT };
}

// edgeLabel is a channel's label: production → consumption rate (one
// figure when they are equal), then
// the capacity when bounded and the initial tokens when there are some
// (the legend says so; the side panel shows both always).
function edgeLabel(c, fromActor, toActor, fromPort, toPort) {
  const pr = portRate(fromActor, "outputs", fromPort), cr = portRate(toActor, "inputs", toPort);
  let s = pr === cr ? pr : pr + " → " + cr;
  if (c.capacity) s += " · cap " + c.capacity;
  if (c.initial) s += " · init " + short(String(c.initial));
  return [s];
}

function portRate(a, list, name) {
  const p = a && a[list].find((x) => x.name === name);
  return p ? short(p.rate) : "?";
}

// short writes rates of 10000 and more in thousands (76800 → 76.8k).
function short(r) {
  return r.replace(/\d{5,}/g, (n) => +(n / 1000).toFixed(1) + "k");
}

// layout runs dagre over the drawn actors, clusters and channels.
function layout(g, report) {
  const { nodes, clusters, edges } = collect(g);
  const lay = new dagre.graphlib.Graph({ multigraph: true, compound: true });
  // Big graphs open as an overview, too small for channel labels: they are
  // left out (and shown on hover), and laid out by quickLayout.
  const big = nodes.length > BIG && clusters.length === 0;
  lay.setGraph({ rankdir: "LR", nodesep: 28, ranksep: big ? 90 : 30, edgesep: 14, marginx: 12, marginy: 40 });
  lay.setDefaultEdgeLabel(() => ({}));
  for (const c of clusters) lay.setNode(c.path, { cluster: true });
  for (const c of clusters) if (c.parent) lay.setParent(c.path, c.parent);
  for (const n of nodes) {
    lay.setNode(n.path, Object.assign(boxSize(n.path, n.actor, report), { n }));
    if (n.parent) lay.setParent(n.path, n.parent);
  }
  const drawn = new Set(nodes.map((n) => n.path));
  for (const e of edges) {
    if (!drawn.has(e.from.node) || !drawn.has(e.to.node)) continue;
    const fa = lay.node(e.from.node).n.actor, ta = lay.node(e.to.node).n.actor;
    const name = e.prefix + e.channel.name;
    const need = report && report.initialize && report.initialize[name];
    const label = edgeLabel(e.channel, fa, ta, e.from.port, e.to.port);
    const lines = need ? [...label, "needs +" + need] : label;
    const width = big ? 0 : Math.max(...lines.map((l) => textWidth(l, 12))) + 16;
    lay.setEdge(e.from.node, e.to.node, { label, need, e, name, width, height: big ? 0 : need ? 42 : 26, labelpos: "c", big }, name);
  }
  const t0 = performance.now();
  if (big) quickLayout(lay, lay.graph());
  else dagre.layout(lay);
  $("graph").dataset.layoutMs = (performance.now() - t0).toFixed(1);
  return { lay, nodes, clusters, big };
}

// drawing is what the current drawing needs to add a box's detail later:
// each actor's node and layout box, the report and its findings, the
// handlers.
const drawing = { nodes: new Map(), report: null, paint: null, on: null, lazy: false };

// drawGraph lays the graph out and draws it into the viewport group;
// returns the drawing's bounds, its boxes and its groups (for the view,
// the minimap and the overview).
export function drawGraph(g, report, on) {
  const vp = $("viewport");
  vp.replaceChildren();
  state.drawn = (state.drawn || 0) + 1;
  const { lay, nodes, clusters, big } = layout(g, report);
  const paint = findingsOf(report);
  const boxes = nodes.map((n) => { const d = lay.node(n.path); return { path: n.path, x: d.x - d.width / 2, y: d.y - d.height / 2, w: d.width, h: d.height }; });
  // Room above the drawing for the groups' labels in the overview.
  const gg = lay.graph(), room = Math.max(60, Math.round(0.08 * gg.height));
  Object.assign(drawing, { nodes: new Map(), report, paint, on, lazy: big });
  const frag = document.createDocumentFragment();
  const groups = layerGroups(boxes, paint);
  for (const grp of groups) frag.appendChild(drawGroup(grp));
  for (const c of clusters) drawCluster(frag, c, lay.node(c.path));
  const backs = lay.edges().filter((e) => isBack(lay, e));
  const bottom = Math.max(0, ...nodes.map((n) => { const d = lay.node(n.path); return d.y + d.height / 2; }));
  for (const e of lay.edges()) drawEdge(frag, lay, e, paint, backs.indexOf(e) >= 0 ? bottom + 34 + 26 * backs.indexOf(e) : null);
  for (const n of nodes) {
    const d = lay.node(n.path);
    const node = drawNode(frag, n, d, paint);
    drawing.nodes.set(n.path, { n, d, node });
    if (!big || n.actor.sub) addDetail(n.path); // a composite's ⊞ shows in the overview too
  }
  frag.appendChild(defs());
  // The layout's coordinates, shifted down to leave the room.
  const root = el("g", { id: "drawroot", transform: "translate(0," + room + ")" });
  root.appendChild(frag);
  vp.appendChild(root);
  for (const b of boxes) b.y += room;
  for (const grp of groups) { grp.y += room; }
  const w = Math.max(gg.width, ...boxes.map((b) => b.x + b.w + 12));
  return { w, h: room + Math.max(gg.height, bottom + 40 + 26 * backs.length), boxes, groups, room };
}

function defs() {
  const d = el("defs", {});
  for (const [id, fill] of [["arrow", "#7d8a9c"], ["arrow-bad", "#d0312d"], ["arrow-rates", "#9c36b5"]]) {
    const m = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    m.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", fill }));
    d.appendChild(m);
  }
  return d;
}

// layerGroups folds the drawing's columns (the layers: boxes sharing a
// centre x) into at most MAX_GROUPS bands of neighbouring layers, each with
// its actors, its bounds and what the findings say of it.
const MAX_GROUPS = 8;
function layerGroups(boxes, paint) {
  if (boxes.length < 2) return [];
  const cols = new Map();
  for (const b of boxes) {
    const cx = Math.round(b.x + b.w / 2);
    (cols.get(cx) || cols.set(cx, []).get(cx)).push(b);
  }
  const xs = [...cols.keys()].sort((a, b) => a - b);
  const per = Math.ceil(xs.length / Math.min(MAX_GROUPS, xs.length));
  const groups = [];
  for (let i = 0; i < xs.length; i += per) {
    const members = xs.slice(i, i + per).flatMap((x) => cols.get(x));
    const x0 = Math.min(...members.map((b) => b.x)), x1 = Math.max(...members.map((b) => b.x + b.w));
    const y0 = Math.min(...members.map((b) => b.y)), y1 = Math.max(...members.map((b) => b.y + b.h));
    const first = i + 1, last = Math.min(xs.length, i + per);
    const flags = [];
    const blocked = members.filter((b) => paint.blocked.has(b.path)).length;
    if (blocked) flags.push(blocked + " blocked");
    if (paint.criticalPart && members.some((b) => paint.critical.has(b.path))) flags.push("bottleneck");
    groups.push({ id: "g" + groups.length, x: x0 - 14, y: y0 - 14, w: x1 - x0 + 28, h: y1 - y0 + 28,
      title: first === last ? "layer " + first : "layers " + first + "–" + last,
      count: members.length, flags, paths: members.map((b) => b.path) });
  }
  return groups;
}

// drawGroup draws a band of layers: a frame and, above it, its label (the
// layers and how many actors), sized by the view to stay legible; a click
// opens it (view.js zooms to it).
function drawGroup(grp) {
  const g = el("g", { class: "group" + (grp.flags.length ? " flagged" : ""), "data-group": grp.id });
  g.appendChild(el("rect", { x: grp.x, y: grp.y, width: grp.w, height: grp.h, rx: 12 }));
  const t = el("text", { class: "glabel", x: grp.x + 6, y: grp.y, dy: "-1.55em" }, grp.title);
  const u = el("text", { class: "glabel sub", x: grp.x + 6, y: grp.y, dy: "-0.45em" }, grp.count + " actor" + (grp.count === 1 ? "" : "s") + (grp.flags.length ? " · " + grp.flags.join(" · ") : ""));
  g.append(t, u, el("title", {}, grp.title + ": " + grp.paths.join(", ")));
  return g;
}

// findingsOf indexes check's findings for the drawing: blocked actors with
// what they wait on, channels on deadlocked cycles, channels waited on,
// critical actors.
export function findingsOf(report) {
  const f = { blocked: new Map(), cycle: new Set(), waiting: new Set(), critical: new Set(), criticalPart: false,
    rates: new Set(), ratesActors: new Set(), inconsistency: null };
  if (!report) return f;
  const inc = report.inconsistency;
  if (inc) {
    f.inconsistency = inc;
    for (const c of inc.channels || []) f.rates.add(c);
    for (const a of inc.actors || []) f.ratesActors.add(a);
  }
  for (const b of report.blocked_actors || []) {
    f.blocked.set(b.actor, b);
    for (const w of b.waits || []) f.waiting.add(w.channel);
  }
  for (const cy of report.cycles || []) for (const c of cy) f.cycle.add(c);
  for (const a of report.critical || []) f.critical.add(a);
  // Marked on the drawing only when it is a part of the graph.
  f.criticalPart = f.critical.size > 0 && f.critical.size < Object.keys(report.repetitions || {}).length;
  return f;
}

// isBack reports whether a channel runs against the layout's direction
// (its consumer is left of its producer): a feedback channel.
function isBack(lay, e) {
  return lay.node(e.w).x < lay.node(e.v).x;
}

// portXY is where a port's dot sits on its actor's box border.
export function portXY(d, actor, port, dir) {
  const list = dir === "in" ? actor.inputs : actor.outputs;
  const i = Math.max(0, list.findIndex((p) => p.name === port));
  const x = dir === "in" ? d.x - d.width / 2 : d.x + d.width / 2;
  return { x, y: d.y - d.height / 2 + HEAD + ROW / 2 + 3 + i * ROW };
}

function drawCluster(vp, c, d) {
  const grp = el("g", { class: "cluster", "data-composite": c.path });
  grp.appendChild(el("rect", { x: d.x - d.width / 2, y: d.y - d.height / 2 - 18, width: d.width, height: d.height + 18, rx: 8 }));
  grp.appendChild(el("text", { x: d.x - d.width / 2 + 8, y: d.y - d.height / 2 - 3 }, "⊟ " + c.path + " (" + (c.actor.sub.name || "") + ")"));
  vp.appendChild(grp);
}

// smooth draws a path through points with rounded corners.
function smooth(pts) {
  let d = "M" + pts[0].x + "," + pts[0].y;
  for (let i = 1; i < pts.length - 1; i++) {
    const p = pts[i], n = pts[i + 1];
    d += " Q" + p.x + "," + p.y + " " + (p.x + n.x) / 2 + "," + (p.y + n.y) / 2;
  }
  const l = pts[pts.length - 1];
  return d + " L" + l.x + "," + l.y;
}

// backRoute is a feedback channel's path: out of the producer's port to
// the right, under the drawing at depth y, into the consumer's port from
// the left; both ends on the boxes' borders.
function backRoute(s, t, y) {
  const r = 8;
  return "M" + s.x + "," + s.y + " H" + (s.x + 18 - r) + " Q" + (s.x + 18) + "," + s.y + " " + (s.x + 18) + "," + (s.y + r) +
    " V" + (y - r) + " Q" + (s.x + 18) + "," + y + " " + (s.x + 18 - r) + "," + y + " H" + (t.x - 18 + r) +
    " Q" + (t.x - 18) + "," + y + " " + (t.x - 18) + "," + (y - r) + " V" + (t.y + r) + " Q" + (t.x - 18) + "," + t.y + " " + (t.x - 18 + r) + "," + t.y + " H" + t.x;
}

// edgeData maps each drawn channel's group to what a click selects.
const edgeData = new WeakMap();

function drawEdge(vp, lay, e, paint, backY) {
  const d = lay.edge(e);
  const { from, to, channel } = d.e;
  const bad = !!d.need || paint.cycle.has(d.name) || paint.waiting.has(d.name) || paint.rates.has(d.name);
  const cls = "edge" + (d.need ? " init" : "") + (paint.rates.has(d.name) ? " rates" : "") + (paint.cycle.has(d.name) ? " cycle" : "") + (paint.waiting.has(d.name) ? " waiting" : "") + (backY !== null ? " back" : "");
  const grp = el("g", { class: cls, "data-channel": d.name, "data-from": channel.from, "data-to": channel.to });
  const fn = lay.node(from.node), tn = lay.node(to.node);
  const s = portXY(fn, fn.n.actor, from.port, "out"), t = portXY(tn, tn.n.actor, to.port, "in");
  let path, lx = d.x, ly = d.y;
  if (backY !== null) {
    path = backRoute(s, t, backY);
    lx = (s.x + t.x) / 2; ly = backY;
  } else {
    const pts = d.points.slice();
    pts[0] = s; pts[pts.length - 1] = t;
    if (pts.length === 2) pts.splice(1, 0, { x: (s.x + t.x) / 2, y: (s.y + t.y) / 2 });
    path = smooth(pts);
  }
  if (!d.big) grp.appendChild(el("path", { class: "hit", d: path })); // a big graph's lines take the clicks
  const marker = paint.rates.has(d.name) ? "arrow-rates" : bad ? "arrow-bad" : "arrow";
  grp.appendChild(el("path", { class: "line", d: path, "marker-end": "url(#" + marker + ")" }));
  if (d.big) grp.dataset.tip = d.name + ": " + d.label.join(" ");
  else grp.appendChild(edgeLabelBox(d, lx, ly));
  edgeData.set(grp, { kind: "channel", prefix: d.e.prefix, channel });
  vp.appendChild(grp);
}

// edgeLabelBox is a channel's label on a white plate, with room for the
// fill bar a run shows.
function edgeLabelBox(d, x, y) {
  const g = el("g", { class: "lbl" });
  const w = d.width, lines = d.need ? [...d.label, "needs +" + d.need] : d.label;
  const h = 16 * lines.length + 8, top = y - h / 2;
  g.appendChild(el("rect", { x: x - w / 2, y: top, width: w, height: h, rx: 4 }));
  lines.forEach((l, i) => g.appendChild(el("text", { class: i === 0 ? "rate" : "need", x, y: top + 16 + 16 * i, "text-anchor": "middle" }, l)));
  g.appendChild(el("rect", { class: "filltrack", x: x - w / 2 + 4, y: top + h - 5, width: w - 8, height: 3, rx: 1.5, style: "display:none" }));
  g.appendChild(el("rect", { class: "fillbar", x: x - w / 2 + 4, y: top + h - 5, width: 0, height: 3, rx: 1.5 }));
  return g;
}

// nodeTag is the line above a box: why it is blocked, or that it bounds
// the throughput.
function nodeTag(path, paint) {
  const b = paint.blocked.get(path);
  if (b) {
    const w = (b.waits || []).map((w) => waitPort(w) + " " + w.state).join(", ");
    return { cls: " blocked", text: "⚠ blocked " + b.fired + "/" + b.target + (w ? ": " + w : "") };
  }
  const inc = paint.inconsistency;
  if (inc && path === inc.target) {
    const per = " per firing of " + inc.base;
    return { cls: " inconsistent", text: inc.cycle ? "⚠ fires " + inc.ratio_b + per : "⚠ fires " + inc.ratio_a + " or " + inc.ratio_b + per };
  }
  if (paint.ratesActors.has(path)) return { cls: " inconsistent", text: path === (inc && inc.base) ? "⚠ the paths start here" : "" };
  if (paint.critical.has(path) && paint.criticalPart) return { cls: " critical", text: "⚑ bottleneck (analysis)" };
  return { cls: "", text: "" };
}

// waitPort names the blocked actor's port on the channel it waits on: its
// input for an empty channel, its output for a full one.
function waitPort(w) {
  const c = state.graph && state.graph.channels.find((c) => c.name === w.channel);
  if (!c) return w.channel;
  return (w.state === "full" ? c.from : c.to).split(".").pop();
}

// drawNode draws an actor's box: its outline, body (a run's heat tints
// it) and header in the colour of where it runs. The text (addDetail)
// comes with it for small graphs, once in view for big ones.
function drawNode(vp, n, d, paint) {
  const a = n.actor;
  const tag = nodeTag(n.path, paint);
  const grp = el("g", { class: "node" + tag.cls + (n.parent ? " inner" : ""), "data-actor": n.path, "data-kind": a.kind || "", "data-place": placeOf(n.path) });
  grp.dataset.tag = tag.text;
  grp.dataset.baseTag = tag.text;
  const mapped = state.mapping && state.mapping[n.path];
  if (mapped) grp.setAttribute("data-mapped", mapped.device || "");
  const x0 = d.x - d.width / 2, y0 = d.y - d.height / 2, colour = placeColour(placeOf(n.path));
  grp.appendChild(el("rect", { class: "box", x: x0, y: y0, width: d.width, height: d.height, rx: 7 }));
  grp.appendChild(el("path", { class: "head", fill: colour, d: "M" + x0 + "," + (y0 + HEAD) + " V" + (y0 + 7) + " Q" + x0 + "," + y0 + " " + (x0 + 7) + "," + y0 +
    " H" + (x0 + d.width - 7) + " Q" + (x0 + d.width) + "," + y0 + " " + (x0 + d.width) + "," + (y0 + 7) + " V" + (y0 + HEAD) + " Z" }));
  vp.appendChild(grp);
  return grp;
}

// boxOf is an actor's box in the drawing's coordinates (those of
// #drawroot), from the layout: reading it lays nothing out. Null when the
// actor is not drawn.
export function boxOf(path) {
  const x = drawing.nodes.get(path);
  return x ? { x: x.d.x - x.d.width / 2, y: x.d.y - x.d.height / 2, width: x.d.width, height: x.d.height } : null;
}

// hasDetail reports whether an actor's box has its text.
export function hasDetail(path) {
  const x = drawing.nodes.get(path);
  return !!(x && x.detail);
}

// addDetail adds an actor box's text: its name, kind badge, ports, foot
// (placement and repetitions), a run's figure and busy bar, and the tag
// above it. Returns false when the actor is not drawn.
export function addDetail(path) {
  const x = drawing.nodes.get(path);
  if (!x) return false;
  if (x.detail) return true;
  const { n, d, node } = x, a = n.actor;
  const x0 = d.x - d.width / 2, y0 = d.y - d.height / 2;
  const g = el("g", { class: "detail" });
  g.appendChild(el("text", { class: "name", x: x0 + PAD, y: y0 + 19 }, n.path.split("/").pop()));
  drawBadge(g, a, x0 + d.width, y0, n.path);
  drawPorts(g, n, d);
  const fy = y0 + d.height - FOOT;
  g.appendChild(el("text", { class: "foot", x: x0 + PAD, y: fy + 15 }, footText(n.path, drawing.report)));
  g.appendChild(el("text", { class: "figure", x: x0 + PAD, y: fy + 32 }, node.dataset.figure || ""));
  const share = node.dataset.busy === undefined ? -1 : +node.dataset.busy;
  g.appendChild(el("rect", { class: "busytrack", x: x0 + 1, y: y0 + d.height - 5, width: d.width - 2, height: 4, style: share < 0 ? "display:none" : "" }));
  g.appendChild(el("rect", { class: "busybar", x: x0 + 1, y: y0 + d.height - 5, width: share < 0 ? 0 : ((d.width - 2) * share).toFixed(1), height: 4 }));
  g.appendChild(el("text", { class: "tag", x: x0, y: y0 - 7 }, node.dataset.tag || ""));
  node.appendChild(g);
  x.detail = g;
  return true;
}

// addDetailIn adds the text of the boxes that meet the rectangle (drawing
// units, before the shift for the groups' labels); returns how many it
// added.
export function addDetailIn(x0, y0, x1, y1) {
  let added = 0;
  for (const [path, x] of drawing.nodes) {
    if (x.detail) continue;
    const d = x.d;
    if (d.x + d.width / 2 < x0 || d.x - d.width / 2 > x1 || d.y + d.height / 2 < y0 || d.y - d.height / 2 > y1) continue;
    addDetail(path);
    added++;
  }
  return added;
}

// drawBadge puts the kind's badge at the header's right end (and a
// composite's expand toggle).
function drawBadge(grp, a, right, y0, path) {
  const text = KINDS[a.kind] || a.kind || "";
  let x = right - 8;
  if (a.sub) {
    const t = el("text", { class: "toggle", x: x - 14, y: y0 + 20, "data-toggle": path }, "⊞");
    t.appendChild(el("title", {}, "expand the composite in place"));
    grp.appendChild(t);
    x -= 22;
  }
  if (!text) return;
  const w = textWidth(text, 12) + 14;
  const b = el("g", { class: "badge" });
  b.appendChild(el("rect", { x: x - w, y: y0 + 6, width: w, height: 16, rx: 3 }));
  b.appendChild(el("text", { x: x - w / 2, y: y0 + 18, "text-anchor": "middle" }, text));
  grp.appendChild(b);
}

// drawPorts draws each port as a dot on the border with its name inside
// the box: inputs left, outputs right.
function drawPorts(grp, n, d) {
  const a = n.actor;
  for (const [dir, list] of [["in", a.inputs], ["out", a.outputs]]) {
    for (const p of list) {
      const xy = portXY(d, a, p.name, dir);
      const lx = dir === "in" ? xy.x + 10 : xy.x - 10;
      grp.appendChild(el("text", { class: "plabel", x: lx, y: xy.y + 4, "text-anchor": dir === "in" ? "start" : "end" }, p.name));
      const c = el("circle", { class: "port " + dir, cx: xy.x, cy: xy.y, r: 5, "data-port": n.path + "." + p.name, "data-dir": dir });
      if (n.parent) c.dataset.inner = "1";
      c.appendChild(el("title", {}, n.path + "." + p.name + " " + p.type + " rate " + p.rate));
      grp.appendChild(c);
    }
  }
}

// wireDrawing routes the drawing's events, once, to the handlers of the
// current drawing: a click on a box selects its actor, on a channel the
// channel, on a port connects (two clicks, or a drag from an output to an
// input), on ⊞ or a cluster's title expands or collapses a composite, on a
// group opens it.
export function wireDrawing(openGroup) {
  const vp = $("viewport");
  const portOf = (t) => t.closest && t.closest("circle.port");
  vp.addEventListener("mousedown", (ev) => {
    const c = portOf(ev.target);
    if (!c) return;
    ev.stopPropagation();
    if (c.dataset.dir === "out" && !c.dataset.inner) state.dragFrom = c.dataset.port;
  });
  vp.addEventListener("mouseup", (ev) => {
    const c = portOf(ev.target);
    if (c && c.dataset.dir === "in" && state.dragFrom) { ev.stopPropagation(); drawing.on.connect(state.dragFrom, c.dataset.port); }
    state.dragFrom = null;
  });
  vp.addEventListener("click", (ev) => {
    const on = drawing.on, t = ev.target;
    if (!on) return;
    const c = portOf(t);
    if (c) { ev.stopPropagation(); if (!c.dataset.inner) on.port(c.dataset.port, c.dataset.dir); return; }
    const tog = t.closest("[data-toggle]");
    if (tog) { ev.stopPropagation(); on.toggle(tog.dataset.toggle); return; }
    const cl = t.closest("g.cluster");
    if (cl) { ev.stopPropagation(); on.toggle(cl.dataset.composite); return; }
    const node = t.closest("g.node");
    if (node) { ev.stopPropagation(); on.select({ kind: "actor", path: node.dataset.actor }); return; }
    const edge = t.closest("g.edge");
    if (edge && edgeData.has(edge)) { ev.stopPropagation(); on.select(edgeData.get(edge)); return; }
    const grp = t.closest("g.group");
    if (grp) { ev.stopPropagation(); openGroup(grp.dataset.group); }
  });
  // One tooltip for the boxes and a big graph's channels: the actor's name
  // and a run's figures, the channel's name and rates.
  const tip = $("tip");
  vp.addEventListener("mousemove", (ev) => {
    const t = ev.target.closest && (ev.target.closest("g.node") || ev.target.closest("g.edge[data-tip]"));
    if (!t || ev.target.closest("circle.port")) { tip.style.display = "none"; return; }
    tip.textContent = t.classList.contains("node") ? t.dataset.actor + (t.dataset.figure && state.runShown ? ": " + t.dataset.figure + " busy" : "") : t.dataset.tip;
    const r = $("canvas").getBoundingClientRect();
    tip.style.left = ev.clientX - r.left + 14 + "px";
    tip.style.top = ev.clientY - r.top + 12 + "px";
    tip.style.display = "block";
  });
  vp.addEventListener("mouseleave", () => { tip.style.display = "none"; });
}

// drawLegend explains the colours (placements on the drawing) and badges,
// in the strip under the drawing (it never covers it).
export function drawLegend(g) {
  const box = $("legend");
  box.replaceChildren();
  const places = new Set(["cpu"]), kinds = new Set();
  const walk = (g, prefix) => { for (const a of g.actors) { places.add(placeOf(prefix + a.name)); kinds.add(a.kind); if (a.sub) walk(a.sub, prefix + a.name + "/"); } };
  if (g) walk(g, "");
  const part = (title) => { const s = html("span", "part"); s.appendChild(html("span", "title", title)); box.appendChild(s); return s; };
  const runs = part("runs on");
  for (const p of [...places].sort()) {
    const s = html("span", "key");
    const sw = html("span", "sw");
    sw.style.background = placeColour(p);
    s.append(sw, p === "cpu" ? "CPU" : p);
    runs.appendChild(s);
  }
  const kind = part("kind");
  for (const k of Object.keys(KINDS)) if (kinds.has(k)) kind.appendChild(html("span", "badge", KINDS[k]));
  part("channel").appendChild(html("span", "", "tokens out → in per firing · cap (if bounded) · init (if any)"));
  const ran = state.run && state.graph && state.run.graph_id && state.run.graph_id === state.graph.id;
  if (ran) part("run").appendChild(html("span", "", "firings/s · busy share (heat) · channel fill bars"));
}
