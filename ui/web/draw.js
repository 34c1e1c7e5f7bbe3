// The drawing: the graph laid out with dagre, an actor as a box coloured by
// where it runs, with its kind as a badge and its ports labelled, a channel
// as an arrow with its rates, capacity and initial tokens; check's findings
// painted on it (blocked actors, deadlocked cycles, channels to initialise,
// the bottleneck). The layers are folded into groups, labelled, that the
// overview shows (see view.js's levels of detail); a big graph's boxes get
// their text (the "detail") only once they are in view at a legible zoom.
// The fused chains a run reported are folded into one box each, opened on
// click. The drawing is written as SVG markup and parsed at once.
import dagre from "dagre";
import { state, $, html } from "./common.js";
import { quickLayout, QuickGraph } from "./quick.js";

const HEAD = 28, ROW = 20, FOOT = 40, PAD = 10;
// TAG is about the width of the longest tag above a box (a measured
// bottleneck's).
const TAG = 260;
// BIG is the most actors drawn with their channels' labels.
export const BIG = 64;
// textWidth estimates the width of s in px at a font size (sans-serif).
const textWidth = (s, px) => s.length * px * 0.58;

// KINDS are the badges by actor kind.
// ("fused" is a folded fused chain's.)
export const KINDS = { go: "Go", builtin: "built-in", kernel: "kernel", flowmodel: "flow-model", composite: "composite", conditional: "cond", synthetic: "cost", fused: "fused" };

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
// composites and opened fused chains, with their parent) and the channels
// with both ends resolved to drawn actors' ports; then folds the fused
// chains that are not opened (foldChains).
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
      } else nodes.push({ path, actor: a, parent, label: a.name });
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
  return foldChains({ nodes, clusters, edges });
}

// chainLabel names a fused chain for the drawing: fused(A..D) of 4 actors
// is "fused A..D (4)".
export function chainLabel(name, n) {
  return name.replace(/^fused\((.*)\)$/, "fused $1") + " (" + n + ")";
}

// fusedChains are the fused chains of the graph drawn, each with its
// actors: what the last run of this graph reported (state.chains, kept
// with the graph's id; another graph has none).
export function fusedChains() {
  const c = state.chains;
  return c && state.graph && state.graph.id && c.id === state.graph.id ? c.map : new Map();
}

// chainsKey says which chains the drawing folds or opens.
function chainsKey() {
  return [...fusedChains().keys()].map((k) => k + (state.openChains.has(k) ? "+" : "")).join("|");
}

// chainsChanged reports whether the fused chains known now differ from
// those drawn (a run that ended reported them): the graph is to be drawn
// again.
export function chainsChanged() {
  return chainsKey() !== drawing.chainsKey;
}

// foldedChainOf is the folded chain an actor is drawn in, or "".
export function foldedChainOf(path) {
  for (const [name, members] of fusedChains()) if (!state.openChains.has(name) && members.includes(path)) return name;
  return "";
}

// foldChains makes each fused chain whose actors are all drawn, side by
// side, a group: opened, a cluster around its actors; folded, one box in
// their place whose ports are the chain's ports to the rest of the graph
// (named "actor.port"), the channels between its actors left out and
// those to the rest re-routed to it.
function foldChains(col) {
  const at = new Map(col.nodes.map((n) => [n.path, n]));
  const into = new Map(); // member path -> folded chain node
  for (const [name, members] of fusedChains()) {
    const ns = members.map((m) => at.get(m));
    if (ns.length < 2 || ns.some((n) => !n || n.chain) || new Set(ns.map((n) => n.parent)).size !== 1) continue;
    const parent = ns[0].parent;
    if (state.openChains.has(name)) {
      col.clusters.push({ path: name, chain: { name, members }, parent });
      for (const n of ns) n.group = name;
      continue;
    }
    const actor = { name, kind: "fused", inputs: [], outputs: [], members };
    const node = { path: name, actor, parent, label: chainLabel(name, members.length), chain: { name, members }, place: ns[0].path };
    for (const m of members) into.set(m, node);
    col.nodes.splice(col.nodes.indexOf(ns[0]), 0, node);
  }
  if (!into.size) return col;
  col.nodes = col.nodes.filter((n) => !into.has(n.path));
  const port = (node, list, end) => {
    const name = end.node + "." + end.port;
    if (!node.actor[list].some((p) => p.name === name)) {
      const a = at.get(end.node).actor, p = a[list].find((x) => x.name === end.port) || { type: "", rate: "?" };
      node.actor[list].push({ name, type: p.type, rate: p.rate });
    }
    return { node: node.path, port: name };
  };
  col.edges = col.edges.filter((e) => {
    const f = into.get(e.from.node), t = into.get(e.to.node);
    if (f && f === t) return false;
    if (f) e.from = port(f, "outputs", e.from);
    if (t) e.to = port(t, "inputs", e.to);
    return true;
  });
  return col;
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

// footText is the box's last line: where it runs, replicas, repetitions;
// a folded fused chain's, where it runs and its actors.
function footText(n, report) {
  const path = n.place || n.path;
  const p = state.mapping && state.mapping[path];
  let s = placeOf(path) + (p && p.replicas > 1 ? " ×" + p.replicas : "");
  if (n.chain) {
    const list = n.chain.members.join(" → ");
    return s + " · " + (list.length > 40 ? list.slice(0, 39) + "…" : list);
  }
  if (report && report.repetitions && report.repetitions[path] !== undefined) s += " · q=" + report.repetitions[path];
  return s;
}

// boxSize is an actor box's width and height: the header with its name and
// badge, a row per port pair, the foot with placement and figures.
function boxSize(n, report) {
  const a = n.actor;
  const head = textWidth(n.label, 14) + textWidth(KINDS[a.kind] || "", 12) + 44 + (a.sub || n.chain ? 20 : 0);
  const inW = Math.max(0, ...a.inputs.map((p) => textWidth(p.name, 12)));
  const outW = Math.max(0, ...a.outputs.map((p) => textWidth(p.name, 12)));
  const body = inW + outW + 50;
  const foot = textWidth(footText(n, report), 12) + 2 * PAD;
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

// layout lays out the drawn actors, clusters and channels: dagre for
// graphs of up to BIG actors (or with a composite expanded), quickLayout
// (in a QuickGraph) for bigger ones, where an opened fused chain is not a
// cluster (chainTitleMarkup); the result is kept for the next drawing of the same
// boxes and channels (a keystroke in the YAML, an edit of a cost).
function layout(g, report) {
  const { nodes, clusters, edges } = collect(g);
  // Big graphs open as an overview, too small for channel labels: they are
  // left out (and shown on hover), and laid out by quickLayout.
  const big = nodes.length > BIG && !clusters.some((c) => !c.chain);
  const lay = big ? new QuickGraph() : new dagre.graphlib.Graph({ multigraph: true, compound: true });
  lay.setGraph({ rankdir: "LR", nodesep: 28, ranksep: big ? 90 : 30, edgesep: 14, marginx: 12, marginy: 40 });
  lay.setDefaultEdgeLabel(() => ({}));
  if (!big) {
    for (const c of clusters) lay.setNode(c.path, { cluster: true });
    for (const c of clusters) if (c.parent) lay.setParent(c.path, c.parent);
  }
  for (const n of nodes) {
    lay.setNode(n.path, Object.assign(boxSize(n, report), { n }));
    if (!big && (n.group || n.parent)) lay.setParent(n.path, n.group || n.parent);
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
  layoutCached(lay, big ? () => quickLayout(lay, lay.graph()) : () => dagre.layout(lay));
  $("graph").dataset.layoutMs = (performance.now() - t0).toFixed(1);
  return { lay, nodes, clusters, big };
}

// laid is the last layout: its input (boxes' sizes, parents, channels
// and their labels' sizes, which layout) and the positions it gave.
let laid = { key: "", pos: null };

// layoutCached lays lay out with run, or gives it the positions of the
// last layout when its input is the same (#graph's data-layout-cached
// says so).
function layoutCached(lay, run) {
  const key = JSON.stringify([lay.graph().ranksep, lay.nodes().map((v) => { const d = lay.node(v); return [v, d.width, d.height, lay.parent(v) || ""]; }),
    lay.edges().map((e) => { const d = lay.edge(e); return [e.v, e.w, e.name, d.width, d.height]; })]);
  if (key === laid.key) {
    for (const v of lay.nodes()) Object.assign(lay.node(v), laid.pos.nodes.get(v));
    for (const e of lay.edges()) Object.assign(lay.edge(e), laid.pos.edges.get(e.name));
    Object.assign(lay.graph(), laid.pos.graph);
    $("graph").dataset.layoutCached = "1";
    return;
  }
  run();
  const gg = lay.graph();
  laid = { key, pos: {
    nodes: new Map(lay.nodes().map((v) => { const d = lay.node(v); return [v, { x: d.x, y: d.y, width: d.width, height: d.height }]; })),
    edges: new Map(lay.edges().map((e) => { const d = lay.edge(e); return [e.name, { points: d.points, x: d.x, y: d.y }]; })),
    graph: { width: gg.width, height: gg.height } } };
  delete $("graph").dataset.layoutCached;
}

// drawing is what the current drawing needs to add a box's detail later:
// each actor's node (its element found once drawn) and layout box, each
// channel's selection, a big graph's channels' labels (their tooltips),
// the report and its findings, the handlers, the fused chains drawn.
const drawing = { nodes: new Map(), edges: new Map(), labels: new Map(), report: null, paint: null, on: null, lazy: false, chainsKey: "", width: 0 };

// The drawing is written as one SVG markup string and parsed by the
// browser at once (a few thousand elements made one by one through the
// DOM cost several times more).
const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);
// r1 writes a coordinate with one decimal at most.
const r1 = (v) => Math.round(v * 10) / 10;
// mk is an element's markup: its attributes (escaped; undefined ones left
// out; numbers as they are) and its content (markup).
function mk(name, attrs, inner) {
  let s = "<" + name;
  for (const k in attrs) {
    const v = attrs[k];
    if (v !== undefined) s += " " + k + '="' + (typeof v === "number" ? v : esc(v)) + '"';
  }
  return s + ">" + (inner || "") + "</" + name + ">";
}

// drawGraph lays the graph out and draws it into the viewport group;
// returns the drawing's bounds, its boxes and its groups (for the view,
// the minimap and the overview).
export function drawGraph(g, report, on) {
  const vp = $("viewport");
  state.drawn = (state.drawn || 0) + 1;
  const { markup, boxes, groups, room, w, h } = drawMarkup(g, report, on);
  // The layout's coordinates, shifted down to leave the room.
  vp.innerHTML = '<g id="drawroot" transform="translate(0,' + room + ')">' + markup + "</g>";
  for (const e of vp.querySelectorAll("g.node, g.chain")) {
    const x = drawing.nodes.get(e.dataset.actor || e.dataset.fused);
    x.node = e;
    if (x.detail) x.detail = e.lastChild;
  }
  return { w, h, boxes, groups, room };
}

// drawMarkup lays the graph out and writes its drawing's markup (the
// drawing's state set for it); the boxes and groups are shifted down by
// room, as the markup will be.
function drawMarkup(g, report, on) {
  const { lay, nodes, clusters, big } = layout(g, report);
  const paint = findingsOf(report);
  const boxes = nodes.map((n) => { const d = lay.node(n.path); return { path: n.path, x: d.x - d.width / 2, y: d.y - d.height / 2, w: d.width, h: d.height }; });
  // Room above the drawing for the groups' labels in the overview.
  const gg = lay.graph(), room = Math.max(60, Math.round(0.08 * gg.height));
  Object.assign(drawing, { nodes: new Map(), edges: new Map(), labels: new Map(), report, paint, on, lazy: big, chainsKey: chainsKey(), width: gg.width });
  const out = [];
  const groups = layerGroups(boxes, paint);
  for (const grp of groups) out.push(groupMarkup(grp));
  for (const c of clusters) out.push(c.chain && big ? chainTitleMarkup(c, lay.node(c.chain.members[0])) : clusterMarkup(c, lay.node(c.path)));
  const edges = lay.edges(), back = new Map();
  for (const e of edges) if (isBack(lay, e)) back.set(e, back.size);
  let bottom = 0;
  for (const n of nodes) { const d = lay.node(n.path); bottom = Math.max(bottom, d.y + d.height / 2); }
  for (const e of edges) out.push(edgeMarkup(lay, e, paint, back.has(e) ? bottom + 34 + 26 * back.get(e) : null));
  for (const n of nodes) {
    const d = lay.node(n.path), x = { n, d, node: null, detail: false };
    drawing.nodes.set(n.path, x);
    // A big graph's boxes get their text once in view (a composite's ⊞
    // and a fused chain's name show in the overview too).
    x.detail = !big || !!n.actor.sub || !!n.chain;
    out.push(nodeMarkup(n, d, paint, x.detail ? detailMarkup(x) : ""));
  }
  out.push(defs());
  for (const b of boxes) b.y += room;
  for (const grp of groups) { grp.y += room; }
  let w = gg.width;
  for (const b of boxes) w = Math.max(w, b.x + b.w + 12);
  return { markup: out.join(""), boxes, groups, room, w, h: room + Math.max(gg.height, bottom + 40 + 26 * back.size) };
}

// warmUp writes, and throws away, the drawing of a made-up graph of 96
// actors in 12 layers, as big graphs are drawn (the overview): the
// drawing's code is compiled then, while the page waits for the server
// to check the graph (seconds for hundreds of actors), instead of in the
// opening drawing's time. The drawing shown, if any, and the kept layout
// are left as they were.
export function warmUp() {
  const actors = [], channels = [], per = 8, layers = 12;
  const port = (name) => ({ name, type: "f32", rate: "1" });
  for (let l = 0; l < layers; l++) {
    for (let i = 0; i < per; i++) {
      actors.push({ name: "w" + l + "_" + i, kind: "synthetic", inputs: l ? [port("in0"), port("in1")] : [], outputs: l < layers - 1 ? [port("out0"), port("out1")] : [] });
      if (!l) continue;
      for (const [k, j] of [[0, i], [1, (i * 3 + l) % per]]) {
        channels.push({ name: "w" + (l - 1) + "_" + j + ".out" + k + "->w" + l + "_" + i + ".in" + k, from: "w" + (l - 1) + "_" + j + ".out" + k, to: "w" + l + "_" + i + ".in" + k, capacity: 8, initial: 0 });
      }
    }
  }
  const ds = $("graph").dataset, kept = Object.assign({}, drawing), keptLaid = laid, keptData = [ds.layoutMs, ds.layoutCached];
  drawMarkup({ name: "warm-up", actors, channels }, null, null);
  Object.assign(drawing, kept);
  laid = keptLaid;
  ["layoutMs", "layoutCached"].forEach((k, i) => { if (keptData[i] === undefined) delete ds[k]; else ds[k] = keptData[i]; });
}

function defs() {
  let s = "";
  for (const [id, fill] of [["arrow", "#7d8a9c"], ["arrow-bad", "#d0312d"], ["arrow-rates", "#9c36b5"]]) {
    s += mk("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, mk("path", { d: "M0,0 L10,5 L0,10 z", fill }));
  }
  return mk("defs", {}, s);
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
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const b of members) { x0 = Math.min(x0, b.x); x1 = Math.max(x1, b.x + b.w); y0 = Math.min(y0, b.y); y1 = Math.max(y1, b.y + b.h); }
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

// groupMarkup draws a band of layers: a frame and, above it, its label
// (the layers and how many actors), sized by the view to stay legible; a
// click opens it (view.js zooms to it).
function groupMarkup(grp) {
  const sub = grp.count + " actor" + (grp.count === 1 ? "" : "s") + (grp.flags.length ? " · " + grp.flags.join(" · ") : "");
  return mk("g", { class: "group" + (grp.flags.length ? " flagged" : ""), "data-group": grp.id },
    mk("rect", { x: r1(grp.x), y: r1(grp.y), width: r1(grp.w), height: r1(grp.h), rx: 12 }) +
    mk("text", { class: "glabel", x: r1(grp.x + 6), y: r1(grp.y), dy: "-1.55em" }, esc(grp.title)) +
    mk("text", { class: "glabel sub", x: r1(grp.x + 6), y: r1(grp.y), dy: "-0.45em" }, esc(sub)) +
    mk("title", {}, esc(grp.title + ": " + grp.paths.join(", "))));
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

// clusterMarkup draws an expanded composite, or an opened fused chain,
// around its actors: a frame with its title above them; a click on it
// collapses it (folds the chain).
function clusterMarkup(c, d) {
  const x0 = d.x - d.width / 2, y0 = d.y - d.height / 2;
  const title = c.chain ? "⊟ " + chainLabel(c.chain.name, c.chain.members.length) : "⊟ " + c.path + " (" + (c.actor.sub.name || "") + ")";
  const attrs = c.chain ? { class: "cluster fused", "data-fused": c.path } : { class: "cluster", "data-composite": c.path };
  return mk("g", attrs, mk("rect", { x: r1(x0), y: r1(y0 - 18), width: r1(d.width), height: r1(d.height + 18), rx: 8 }) +
    mk("text", { x: r1(x0 + 8), y: r1(y0 - 3) }, esc(title)) +
    (c.chain ? mk("title", {}, esc("ran as one fused chain: " + c.chain.members.join(" → ") + "; click to fold")) : ""));
}

// chainTitleMarkup draws an opened fused chain of a big graph (whose
// layout has no clusters: a frame around its actors would take in
// others): its title above its first actor, whose click folds it; its
// actors are outlined (class inchain).
function chainTitleMarkup(c, d) {
  const x0 = d.x - d.width / 2, y0 = d.y - d.height / 2;
  return mk("g", { class: "cluster fused", "data-fused": c.path }, mk("text", { x: r1(x0), y: r1(y0 - 24) }, esc("⊟ " + chainLabel(c.chain.name, c.chain.members.length))) +
    mk("title", {}, esc("ran as one fused chain: " + c.chain.members.join(" → ") + "; click to fold")));
}

// smooth draws a path through points with rounded corners.
function smooth(pts) {
  let d = "M" + r1(pts[0].x) + "," + r1(pts[0].y);
  for (let i = 1; i < pts.length - 1; i++) {
    const p = pts[i], n = pts[i + 1];
    d += " Q" + r1(p.x) + "," + r1(p.y) + " " + r1((p.x + n.x) / 2) + "," + r1((p.y + n.y) / 2);
  }
  const l = pts[pts.length - 1];
  return d + " L" + r1(l.x) + "," + r1(l.y);
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

// edgeMarkup draws a channel: its arrow from port to port and its label,
// in a group (class edge); what a click on it selects goes into
// drawing.edges.
function edgeMarkup(lay, e, paint, backY) {
  const d = lay.edge(e);
  const { from, to, channel } = d.e;
  const bad = !!d.need || paint.cycle.has(d.name) || paint.waiting.has(d.name) || paint.rates.has(d.name);
  const cls = "edge" + (d.need ? " init" : "") + (paint.rates.has(d.name) ? " rates" : "") + (paint.cycle.has(d.name) ? " cycle" : "") + (paint.waiting.has(d.name) ? " waiting" : "") + (backY !== null ? " back" : "");
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
  drawing.edges.set(d.name, { kind: "channel", prefix: d.e.prefix, channel });
  if (d.big) drawing.labels.set(d.name, d.label);
  const marker = paint.rates.has(d.name) ? "arrow-rates" : bad ? "arrow-bad" : "arrow";
  const line = mk("path", { class: "line", d: path, "marker-end": "url(#" + marker + ")" });
  // A big graph's channel is its line alone (class edge line), which takes
  // the clicks; its name and rates are its tooltip (edgeTip).
  if (d.big) return mk("path", { class: cls + " line", "data-channel": d.name, d: path, "marker-end": "url(#" + marker + ")" });
  const attrs = { class: cls, "data-channel": d.name, "data-from": channel.from, "data-to": channel.to };
  return mk("g", attrs, mk("path", { class: "hit", d: path }) + line + edgeLabelBox(d, lx, ly));
}

// edgeLabelBox is a channel's label on a white plate, with room for the
// fill bar a run shows.
function edgeLabelBox(d, x, y) {
  const w = d.width, lines = d.need ? [...d.label, "needs +" + d.need] : d.label;
  const h = 16 * lines.length + 8, top = y - h / 2;
  let s = mk("rect", { x: r1(x - w / 2), y: r1(top), width: r1(w), height: h, rx: 4 });
  lines.forEach((l, i) => { s += mk("text", { class: i === 0 ? "rate" : "need", x: r1(x), y: r1(top + 16 + 16 * i), "text-anchor": "middle" }, esc(l)); });
  s += mk("rect", { class: "filltrack", x: r1(x - w / 2 + 4), y: r1(top + h - 5), width: r1(w - 8), height: 3, rx: 1.5, style: "display:none" });
  s += mk("rect", { class: "fillbar", x: r1(x - w / 2 + 4), y: r1(top + h - 5), width: 0, height: 3, rx: 1.5 });
  return mk("g", { class: "lbl" }, s);
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

// nodeMarkup draws an actor's box: its outline, body (a run's heat tints
// it) and header in the colour of where it runs, then its detail (the
// text: addDetail), which comes with it for small graphs and once in
// view for big ones. A big graph's box has its header with its detail
// (the overview hides both) and is outlined in the colour of where it
// runs. A folded fused chain is such a box (class chain) for its actors,
// which a click opens.
function nodeMarkup(n, d, paint, detail) {
  const a = n.actor, place = placeOf(n.place || n.path);
  const x0 = d.x - d.width / 2, y0 = d.y - d.height / 2;
  const box = mk("rect", { class: "box", x: r1(x0), y: r1(y0), width: r1(d.width), height: r1(d.height), rx: 7, stroke: drawing.lazy ? placeColour(place) : "#9aa7b8" }) +
    (drawing.lazy ? "" : headMarkup(n, d));
  if (n.chain) {
    const tip = chainLabel(n.chain.name, n.chain.members.length) + ": " + n.chain.members.join(" → ") + ", run as one unit; click to open";
    return mk("g", { class: "chain fused folded", "data-fused": n.path, "data-members": n.chain.members.join(" "), "data-place": place, "data-tip": tip, "data-tag": "" }, box + detail);
  }
  const tag = nodeTag(n.path, paint);
  const mapped = state.mapping && state.mapping[n.path];
  return mk("g", { class: "node" + tag.cls + (n.parent ? " inner" : "") + (n.group && drawing.lazy ? " inchain" : ""), "data-actor": n.path, "data-kind": a.kind || "", "data-place": place,
    "data-mapped": mapped ? mapped.device || "" : undefined, "data-tag": tag.text, "data-base-tag": tag.text }, box + detail);
}

// headMarkup is a box's header, in the colour of where it runs.
function headMarkup(n, d) {
  const x0 = d.x - d.width / 2, y0 = d.y - d.height / 2;
  return mk("path", { class: "head", fill: placeColour(placeOf(n.place || n.path)), d: "M" + r1(x0) + "," + r1(y0 + HEAD) + " v-21 q0,-7 7,-7 h" + r1(d.width - 14) + " q7,0 7,7 v21 z" });
}

// detailMarkup is an actor box's text: its name, kind badge, ports, foot
// (placement and repetitions), a run's figure and busy bar, and the tag
// above it (the figures and tag from the box's data, where a run put
// them before the text came).
function detailMarkup(x) {
  const { n, d, node } = x, ds = node ? node.dataset : {};
  const x0 = d.x - d.width / 2, y0 = d.y - d.height / 2, fy = y0 + d.height - FOOT;
  const share = ds.busy === undefined ? -1 : +ds.busy;
  return mk("g", { class: "detail" }, (drawing.lazy ? headMarkup(n, d) : "") +
    mk("text", { class: "name", x: r1(x0 + PAD), y: r1(y0 + 19) }, esc(n.label)) +
    badgeMarkup(n, x0 + d.width, y0) + portsMarkup(n, d) +
    mk("text", { class: "foot", x: r1(x0 + PAD), y: r1(fy + 15) }, esc(footText(n, drawing.report))) +
    mk("text", { class: "figure", x: r1(x0 + PAD), y: r1(fy + 32) }, esc(ds.figure || "")) +
    mk("rect", { class: "busytrack", x: r1(x0 + 1), y: r1(y0 + d.height - 5), width: r1(d.width - 2), height: 4, style: share < 0 ? "display:none" : undefined }) +
    mk("rect", { class: "busybar", x: r1(x0 + 1), y: r1(y0 + d.height - 5), width: share < 0 ? 0 : ((d.width - 2) * share).toFixed(1), height: 4 }) +
    // The tag above, ending at the box's right end near the drawing's.
    mk("text", Object.assign({ class: "tag", y: r1(y0 - 7) }, x0 + TAG > drawing.width ? { x: r1(x0 + d.width), "text-anchor": "end" } : { x: r1(x0) }),
      esc(ds.tag || (node ? "" : nodeTag(n.path, drawing.paint).text))));
}

// addDetail adds an actor box's text (detailMarkup). Returns false when
// the actor is not drawn.
export function addDetail(path) {
  const x = drawing.nodes.get(path);
  if (!x) return false;
  if (x.detail) return true;
  x.node.insertAdjacentHTML("beforeend", detailMarkup(x));
  x.detail = x.node.lastChild;
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

// badgeMarkup puts the kind's badge at the header's right end (and a
// composite's expand toggle, or a folded chain's).
function badgeMarkup(n, right, y0) {
  const a = n.actor, text = KINDS[a.kind] || a.kind || "";
  let x = right - 8, s = "";
  if (a.sub || n.chain) {
    const what = n.chain ? { "data-chain": n.path } : { "data-toggle": n.path };
    s += mk("text", Object.assign({ class: "toggle", x: r1(x - 14), y: r1(y0 + 20) }, what), "⊞" +
      mk("title", {}, n.chain ? "open the fused chain: its actors" : "expand the composite in place"));
    x -= 22;
  }
  if (!text) return s;
  const w = textWidth(text, 12) + 14;
  return s + mk("g", { class: "badge" }, mk("rect", { x: r1(x - w), y: r1(y0 + 6), width: r1(w), height: 16, rx: 3 }) +
    mk("text", { x: r1(x - w / 2), y: r1(y0 + 18), "text-anchor": "middle" }, esc(text)));
}

// portsMarkup draws each port as a dot on the border with its name inside
// the box: inputs left, outputs right. A folded chain's ports are its
// actors' ("actor.port").
function portsMarkup(n, d) {
  const a = n.actor;
  let s = "";
  for (const [dir, list] of [["in", a.inputs], ["out", a.outputs]]) {
    for (const p of list) {
      const xy = portXY(d, a, p.name, dir);
      const lx = dir === "in" ? xy.x + 10 : xy.x - 10;
      const ref = n.chain ? p.name : n.path + "." + p.name;
      s += mk("text", { class: "plabel", x: r1(lx), y: r1(xy.y + 4), "text-anchor": dir === "in" ? "start" : "end" }, esc(p.name));
      s += mk("circle", { class: "port " + dir, cx: r1(xy.x), cy: r1(xy.y), r: 5, "data-port": ref, "data-dir": dir, "data-inner": n.parent ? "1" : undefined },
        mk("title", {}, esc(ref + " " + p.type + " rate " + p.rate)));
    }
  }
  return s;
}

// wireDrawing routes the drawing's events, once, to the handlers of the
// current drawing: a click on a box selects its actor, on a channel the
// channel, on a port connects (two clicks, or a drag from an output to an
// input), on ⊞ or a cluster's title expands or collapses a composite, on a
// folded fused chain opens it and on an opened one's frame folds it, on a
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
    const ch = t.closest("g.fused");
    if (ch) { ev.stopPropagation(); on.chain(ch.dataset.fused); return; }
    const cl = t.closest("g.cluster");
    if (cl) { ev.stopPropagation(); on.toggle(cl.dataset.composite); return; }
    const node = t.closest("g.node");
    if (node) { ev.stopPropagation(); on.select({ kind: "actor", path: node.dataset.actor }); return; }
    const edge = t.closest(".edge");
    if (edge && drawing.edges.has(edge.dataset.channel)) { ev.stopPropagation(); on.select(drawing.edges.get(edge.dataset.channel)); return; }
    const grp = t.closest("g.group");
    if (grp) { ev.stopPropagation(); openGroup(grp.dataset.group); }
  });
  // One tooltip for the boxes and a big graph's channels: the actor's name
  // and a run's figures, a folded chain's actors, the channel's name and
  // rates.
  const tip = $("tip");
  vp.addEventListener("mousemove", (ev) => {
    const t = ev.target.closest && (ev.target.closest("g.node") || ev.target.closest("g.chain, path.edge"));
    if (!t || ev.target.closest("circle.port")) { tip.style.display = "none"; return; }
    tip.textContent = t.classList.contains("node") ? t.dataset.actor + (t.dataset.figure && state.runShown ? ": " + t.dataset.figure + " busy" : "") : t.dataset.tip || edgeTip(t.dataset.channel);
    const r = $("canvas").getBoundingClientRect();
    tip.style.left = ev.clientX - r.left + 14 + "px";
    tip.style.top = ev.clientY - r.top + 12 + "px";
    tip.style.display = "block";
  });
  vp.addEventListener("mouseleave", () => { tip.style.display = "none"; });
}

// edgeTip is a big graph's channel's tooltip: its name and rates.
function edgeTip(name) {
  return name + ": " + (drawing.labels.get(name) || []).join(" ");
}

// drawLegend explains the colours (placements on the drawing) and badges,
// in the strip under the drawing (it never covers it).
export function drawLegend(g) {
  const box = $("legend");
  box.replaceChildren();
  const places = new Set(["cpu"]), kinds = new Set();
  const walk = (g, prefix) => { for (const a of g.actors) { places.add(placeOf(prefix + a.name)); kinds.add(a.kind); if (a.sub) walk(a.sub, prefix + a.name + "/"); } };
  if (g) walk(g, "");
  if ($("graph").querySelector("g.chain")) kinds.add("fused");
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
