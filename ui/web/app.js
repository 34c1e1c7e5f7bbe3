// sluice ui's page: the graph laid out with dagre and edited on the drawing
// (POST /api/edit, undo/redo), composites expanded in place, check's
// findings, a YAML editor kept in sync both ways, Go generation, runs with
// live firings, predicted vs measured throughput and a bucketed timeline.
// See docs/ui.md.
const dagre = require("dagre");

const token = new URLSearchParams(location.search).get("token");
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

// api calls path on the server with the page's token, if any.
async function api(method, path, body) {
  const headers = {};
  if (token) headers["Authorization"] = "Bearer " + token;
  const r = await fetch(path, { method, headers, body });
  let data = null;
  try { data = await r.json(); } catch (e) { data = { errors: ["answer is not JSON"] }; }
  return { status: r.status, data };
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

// html makes an HTML element with a class and text.
function html(name, cls, text) {
  const e = document.createElement(name);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function rates(ports) {
  return ports.map((p) => p.name + ":" + p.rate).join(" ");
}

// The page's state: the last graph answered, its report and mapping, the
// composites drawn expanded, the selection and a pending connection.
const state = { graph: null, report: null, mapping: null, expanded: new Set(), selected: null, connectFrom: null };

// ---- drawing -------------------------------------------------------------

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
      } else {
        nodes.push({ path, actor: a, parent });
      }
    }
    for (const c of g.channels) {
      edges.push({ channel: c, prefix, from: resolve(prefix, c.from, "out"), to: resolve(prefix, c.to, "in") });
    }
  };
  // resolve follows an end "a.p" into expanded composites: a composite's
  // port is bound to its subgraph's input or output of the same name.
  const resolve = (prefix, end, dir) => {
    const dot = end.indexOf(".");
    const path = prefix + end.slice(0, dot), port = end.slice(dot + 1);
    const a = byPath[path] || findActor(g, path);
    if (a && a.sub && state.expanded.has(path)) {
      const b = (dir === "out" ? a.sub.outputs : a.sub.inputs) || [];
      const inner = b.find((x) => x.name === port);
      if (inner) return resolve(path + "/", inner.port, dir);
    }
    return { node: path, port };
  };
  walk(g, "", null);
  return { nodes, clusters, edges };
}

// findActor finds the actor at a path ("a/b/c") in g.
function findActor(g, path) {
  let a = null;
  for (const name of path.split("/")) {
    if (!g) return null;
    a = g.actors.find((x) => x.name === name);
    g = a && a.sub;
  }
  return a;
}

// nodeLines is the text of an actor's box.
function nodeLines(path, a, report, mapping) {
  const lines = [path];
  if (a.inputs.length) lines.push("in " + rates(a.inputs));
  if (a.outputs.length) lines.push("out " + rates(a.outputs));
  const p = mapping && mapping[path];
  if (p) lines.push((p.device || "cpu") + (p.replicas > 1 ? " ×" + p.replicas : ""));
  if (a.sub) lines.push("composite: " + a.sub.actors.length + " actors (click ⊞)");
  if (report && report.repetitions && report.repetitions[path] !== undefined) lines.push("q=" + report.repetitions[path]);
  return lines;
}

// drawGraph lays the graph out with dagre and draws it: a box per actor
// with its ports as dots (inputs left, outputs right), a cluster box per
// expanded composite, an arrow per channel between the ports it joins.
function drawGraph(g, report, mapping) {
  const svg = $("graph");
  svg.replaceChildren();
  const { nodes, clusters, edges } = collect(g);
  const lay = new dagre.graphlib.Graph({ multigraph: true, compound: true });
  lay.setGraph({ rankdir: "LR", nodesep: 30, ranksep: 70 });
  lay.setDefaultEdgeLabel(() => ({}));
  for (const c of clusters) lay.setNode(c.path, { label: c.path, cluster: true });
  for (const c of clusters) if (c.parent) lay.setParent(c.path, c.parent);
  for (const n of nodes) {
    const lines = nodeLines(n.path, n.actor, report, mapping);
    const w = 24 + 7.5 * Math.max(...lines.map((l) => l.length));
    const ports = Math.max(n.actor.inputs.length, n.actor.outputs.length);
    lay.setNode(n.path, { width: w, height: Math.max(16 * lines.length + 10, 18 * ports + 8), lines, actor: n.actor });
    if (n.parent) lay.setParent(n.path, n.parent);
  }
  const drawn = new Set(nodes.map((n) => n.path));
  for (const e of edges) {
    if (!drawn.has(e.from.node) || !drawn.has(e.to.node)) continue;
    const c = e.channel;
    const name = e.prefix + c.name;
    const init = report && report.initialize && report.initialize[c.name];
    const label = "cap " + (c.capacity || "∞") + " init " + c.initial + (init ? " (needs " + init + ")" : "");
    lay.setEdge(e.from.node, e.to.node, { label, width: label.length * 7, height: 14, init: !!init, e }, name);
  }
  dagre.layout(lay);
  for (const c of clusters) drawCluster(svg, c, lay.node(c.path));
  const blocked = new Set((report && report.blocked) || []);
  for (const e of lay.edges()) drawEdge(svg, lay, e);
  for (const n of nodes) drawNode(svg, n, lay.node(n.path), blocked.has(n.path));
  const defs = el("defs", {});
  const m = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" });
  m.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#557" }));
  defs.appendChild(m);
  svg.appendChild(defs);
  // Drawn at its natural size, shrunk to the pane's width down to 50 %
  // (the pane scrolls beyond).
  const gg = lay.graph();
  const w = gg.width + 40, h = gg.height + 40;
  const scale = Math.max(0.5, Math.min(1, (svg.parentElement.clientWidth - 20) / w));
  svg.setAttribute("viewBox", "-10 -10 " + w + " " + h);
  svg.style.width = w * scale + "px";
  svg.style.height = Math.max(200, h * scale) + "px";
  markSelection();
}

// portXY is where a port's dot sits on its actor's box.
function portXY(d, actor, port, dir) {
  const list = dir === "in" ? actor.inputs : actor.outputs;
  const i = Math.max(0, list.findIndex((p) => p.name === port));
  const x = dir === "in" ? d.x - d.width / 2 : d.x + d.width / 2;
  const y = d.y - d.height / 2 + (d.height * (i + 1)) / (list.length + 1);
  return { x, y };
}

function drawCluster(svg, c, d) {
  const grp = el("g", { class: "cluster", "data-composite": c.path });
  grp.appendChild(el("rect", { x: d.x - d.width / 2, y: d.y - d.height / 2 - 14, width: d.width, height: d.height + 14, rx: 6 }));
  grp.appendChild(el("text", { x: d.x - d.width / 2 + 6, y: d.y - d.height / 2 - 2 }, "⊟ " + c.path + " (" + (c.actor.sub.name || "") + ")"));
  grp.addEventListener("click", (ev) => { ev.stopPropagation(); toggleComposite(c.path); });
  svg.appendChild(grp);
}

function drawEdge(svg, lay, e) {
  const d = lay.edge(e);
  const { from, to, channel } = d.e;
  const grp = el("g", { class: "edge" + (d.init ? " init" : ""), "data-channel": e.name, "data-from": channel.from, "data-to": channel.to });
  const pts = d.points.slice();
  const fn = lay.node(from.node), tn = lay.node(to.node);
  pts[0] = portXY(fn, fn.actor, from.port, "out");
  pts[pts.length - 1] = portXY(tn, tn.actor, to.port, "in");
  const path = "M" + pts.map((p) => p.x + "," + p.y).join(" L");
  grp.appendChild(el("path", { class: "hit", d: path }));
  grp.appendChild(el("path", { d: path, "marker-end": "url(#arrow)" }));
  grp.appendChild(el("text", { x: d.x - d.width / 2, y: d.y }, d.label));
  grp.addEventListener("click", (ev) => { ev.stopPropagation(); select({ kind: "channel", prefix: d.e.prefix, channel }); });
  svg.appendChild(grp);
}

function drawNode(svg, n, d, blocked) {
  const a = n.actor;
  const grp = el("g", { class: "node" + (blocked ? " blocked" : "") + (n.parent ? " inner" : ""), "data-actor": n.path });
  grp.appendChild(el("rect", { x: d.x - d.width / 2, y: d.y - d.height / 2, width: d.width, height: d.height, rx: 4 }));
  d.lines.forEach((l, i) => grp.appendChild(el("text", { x: d.x - d.width / 2 + 12, y: d.y - d.height / 2 + 17 + 16 * i }, l)));
  if (a.sub) {
    const t = el("text", { class: "toggle", x: d.x + d.width / 2 - 18, y: d.y - d.height / 2 + 16, "data-toggle": n.path }, "⊞");
    t.addEventListener("click", (ev) => { ev.stopPropagation(); toggleComposite(n.path); });
    grp.appendChild(t);
  }
  for (const [dir, list] of [["in", a.inputs], ["out", a.outputs]]) {
    for (const p of list) {
      const xy = portXY(d, a, p.name, dir);
      const c = el("circle", { class: "port " + dir, cx: xy.x, cy: xy.y, r: 5, "data-port": n.path + "." + p.name, "data-dir": dir });
      c.appendChild(el("title", {}, n.path + "." + p.name + " " + p.type + " rate " + p.rate));
      c.addEventListener("mousedown", (ev) => { ev.stopPropagation(); if (dir === "out" && !n.parent) state.dragFrom = n.path + "." + p.name; });
      c.addEventListener("mouseup", (ev) => { if (dir === "in" && state.dragFrom) { ev.stopPropagation(); connect(state.dragFrom, n.path + "." + p.name); } state.dragFrom = null; });
      c.addEventListener("click", (ev) => { ev.stopPropagation(); if (!n.parent) portClick(n.path + "." + p.name, dir); });
      grp.appendChild(c);
    }
  }
  grp.addEventListener("click", (ev) => { ev.stopPropagation(); select({ kind: "actor", path: n.path }); });
  svg.appendChild(grp);
}

function toggleComposite(path) {
  if (state.expanded.has(path)) {
    for (const p of [...state.expanded]) if (p === path || p.startsWith(path + "/")) state.expanded.delete(p);
  } else state.expanded.add(path);
  if (state.graph) drawGraph(state.graph, state.report, state.mapping);
}

// ---- connecting ports ------------------------------------------------------

// portClick is the two-click connect: an output port, then an input port.
function portClick(ref, dir) {
  if (dir === "out") {
    state.connectFrom = ref;
    $("hint").textContent = "connect " + ref + " → click an input port (Esc cancels)";
    markSelection();
  } else if (state.connectFrom) {
    connect(state.connectFrom, ref);
  }
}

function connect(from, to) {
  state.connectFrom = null;
  $("hint").textContent = "";
  edit([{ op: "add_channel", from, to }]);
}

// ---- selection and the side panel ------------------------------------------

function select(sel) {
  state.selected = sel;
  markSelection();
  showPanel();
}

function markSelection() {
  for (const e of document.querySelectorAll("#graph .selected, #graph .pending")) e.classList.remove("selected", "pending");
  const s = state.selected;
  if (s && s.kind === "actor") {
    const n = document.querySelector('#graph g.node[data-actor="' + CSS.escape(s.path) + '"]');
    if (n) n.classList.add("selected");
  }
  if (s && s.kind === "channel") {
    const n = document.querySelector('#graph g.edge[data-channel="' + CSS.escape(s.prefix + s.channel.name) + '"]');
    if (n) n.classList.add("selected");
  }
  if (state.connectFrom) {
    const p = document.querySelector('#graph circle.port[data-port="' + CSS.escape(state.connectFrom) + '"]');
    if (p) p.classList.add("pending");
  }
}

// field makes a labelled input; change(value) runs when it changes.
function field(label, value, attrs, change) {
  const l = html("label", "field", label + " ");
  const i = html("input");
  i.value = value === undefined || value === null ? "" : value;
  for (const k in attrs) i.setAttribute(k, attrs[k]);
  if (change) i.addEventListener("change", () => change(i.value));
  l.appendChild(i);
  return l;
}

function button(text, id, click) {
  const b = html("button", "", text);
  if (id) b.id = id;
  b.addEventListener("click", click);
  return b;
}

// showPanel fills the side panel for the selection: an actor's cost,
// ports and placement, a channel's capacity and initial tokens, or, with
// nothing selected, the palette to add actors.
function showPanel() {
  const p = $("panel");
  p.replaceChildren();
  const s = state.selected;
  if (s && s.kind === "actor") {
    const a = state.graph && findActor(state.graph, s.path);
    if (a) return actorPanel(p, s.path, a);
  }
  if (s && s.kind === "channel") return channelPanel(p, s);
  palette(p);
}

function actorPanel(p, path, a) {
  const inner = path.includes("/");
  p.appendChild(html("h2", "", "actor " + path));
  if (inner) p.appendChild(html("div", "note", "inside a composite: edit its file or the text"));
  const dis = inner ? { disabled: "" } : {};
  p.appendChild(field("cost", a.cost_ns ? a.cost_ns + "ns" : "", Object.assign({ "data-field": "cost" }, dis),
    (v) => edit([{ op: "set_actor", actor: path, cost: v }])));
  for (const [dir, list] of [["in", a.inputs], ["out", a.outputs]]) {
    for (const port of list) {
      const row = html("div", "portrow");
      row.appendChild(html("span", "", dir + " " + port.name + " "));
      row.appendChild(field("type", port.type, Object.assign({ "data-field": "type", "data-port": port.name, size: 5 }, dis),
        (v) => edit([{ op: "set_port", actor: path, port: port.name, type: v }])));
      row.appendChild(field("rate", port.rate, Object.assign({ "data-field": "rate", "data-port": port.name, size: 6 }, dis),
        (v) => edit([{ op: "set_port", actor: path, port: port.name, rate: v }])));
      if (!inner) row.appendChild(button("×", "", () => edit([{ op: "remove_port", actor: path, port: port.name }])));
      p.appendChild(row);
    }
  }
  if (!inner) {
    const add = html("div", "portrow");
    const dir = html("select");
    for (const d of ["in", "out"]) { const o = html("option", "", d); o.value = d; dir.appendChild(o); }
    const name = field("port", "", { size: 5, id: "newport-name" }), type = field("type", "f32", { size: 4, id: "newport-type" }), rate = field("rate", "1", { size: 4, id: "newport-rate" });
    add.append(dir, name, type, rate, button("add port", "add-port", () => edit([{ op: "add_port", actor: path, dir: dir.value,
      name: $("newport-name").value, type: $("newport-type").value, rate: $("newport-rate").value }])));
    p.appendChild(add);
  }
  const pl = (state.mapping && state.mapping[path]) || {};
  p.appendChild(html("h3", "", "mapping"));
  p.appendChild(field("device", pl.device || "", { "data-field": "device", placeholder: "cpu, opencl:0:0, cuda:0" }, (v) => place(path, v, pl.replicas || 0)));
  p.appendChild(field("replicas", pl.replicas || "", { "data-field": "replicas", type: "number", min: 0 }, (v) => place(path, pl.device || "", parseInt(v || "0", 10))));
  if (!inner) p.appendChild(button("delete actor", "delete-actor", () => removeActor(path)));
}

function channelPanel(p, s) {
  const c = s.channel, inner = !!s.prefix;
  p.appendChild(html("h2", "", "channel " + s.prefix + c.name));
  const dis = inner ? { disabled: "" } : {};
  const set = (k) => (v) => edit([{ op: "set_channel", from: c.from, to: c.to, [k]: parseInt(v || "0", 10) }]);
  p.appendChild(field("capacity", c.capacity || "", Object.assign({ "data-field": "capacity", type: "number", min: 0 }, dis), set("capacity")));
  p.appendChild(field("initial", c.initial || "", Object.assign({ "data-field": "initial", type: "number", min: 0 }, dis), set("initial")));
  if (!inner) p.appendChild(button("delete channel", "delete-channel", () => { state.selected = null; edit([{ op: "remove_channel", from: c.from, to: c.to }]); }));
}

let builtins = null;
// palette is the form that adds an actor: plain, a built-in, a kernel by
// file or a composite by file, with its ports written "name:type:rate".
function palette(p) {
  p.appendChild(html("h2", "", "add an actor"));
  p.appendChild(field("name", "", { id: "add-name", size: 10 }));
  const kind = html("select");
  kind.id = "add-kind";
  for (const k of ["plain", "builtin", "kernel", "composite"]) { const o = html("option", "", k); o.value = k; kind.appendChild(o); }
  const kl = html("label", "field", "kind ");
  kl.appendChild(kind);
  p.appendChild(kl);
  const use = html("select");
  use.id = "add-use";
  for (const b of builtins || []) { const o = html("option", "", b.name); o.value = b.name; o.title = b.doc; use.appendChild(o); }
  const ul = html("label", "field", "built-in ");
  ul.appendChild(use);
  p.appendChild(ul);
  p.appendChild(field("file", "", { id: "add-file", placeholder: "kernel .cl/.cu or composite .yaml" }));
  p.appendChild(field("in", "", { id: "add-in", placeholder: "x:f32:1, y:f32:4" }));
  p.appendChild(field("out", "", { id: "add-out", placeholder: "z:f32:1" }));
  p.appendChild(field("cost", "", { id: "add-cost", placeholder: "1us" }));
  p.appendChild(button("add actor", "add-actor", addActor));
  p.appendChild(html("div", "note", "click an output port then an input port (or drag) to connect; Delete removes the selection; Ctrl+Z / Ctrl+Y undo and redo"));
}

function parsePorts(s) {
  return s.split(",").map((x) => x.trim()).filter((x) => x).map((x) => {
    const [name, type, rate] = x.split(":");
    return { name, type: type || "f32", rate: rate || "1" };
  });
}

function addActor() {
  const op = { op: "add_actor", name: $("add-name").value.trim(), in: parsePorts($("add-in").value), out: parsePorts($("add-out").value) };
  const kind = $("add-kind").value, file = $("add-file").value.trim(), cost = $("add-cost").value.trim();
  if (kind === "builtin") op.use = $("add-use").value;
  if (kind === "kernel") op.kernel = file;
  if (kind === "composite") op.graph = file;
  if (cost) op.cost = cost;
  edit([op]);
}

// removeActor deletes an actor from the drawing, and its placement, which
// would otherwise name an actor the graph no longer has.
async function removeActor(path) {
  state.selected = null;
  if (state.mapping && state.mapping[path]) await api("POST", "/api/mapping", JSON.stringify({ actor: path, device: "", replicas: 0 }));
  edit([{ op: "remove_actor", actor: path }]);
}

async function place(actor, device, replicas) {
  const r = await api("POST", "/api/mapping", JSON.stringify({ actor, device, replicas }));
  if (r.status !== 200) { showErrors(r.data.errors); return; }
  checkNow();
}

// ---- edits, undo, redo -----------------------------------------------------

// history holds the YAML texts the page went through; at is the current one.
const history = { texts: [], at: -1 };

function remember(text) {
  if (history.texts[history.at] === text) return;
  history.texts = history.texts.slice(0, history.at + 1);
  history.texts.push(text);
  history.at = history.texts.length - 1;
  undoButtons();
}

function undoButtons() {
  $("undo").disabled = history.at <= 0;
  $("redo").disabled = history.at >= history.texts.length - 1;
}

function undo() { if (history.at > 0) { history.at--; restore(); } }
function redo() { if (history.at < history.texts.length - 1) { history.at++; restore(); } }

function restore() {
  $("yaml").value = history.texts[history.at];
  $("saved").textContent = "";
  undoButtons();
  checkNow();
}

// edit sends drawing edits to the server, which applies them to the YAML;
// the text area takes the YAML answered and the drawing follows.
async function edit(ops) {
  clearTimeout(timer);
  const mine = ++seq;
  const r = await api("POST", "/api/edit", JSON.stringify({ yaml: $("yaml").value, ops }));
  if (mine !== seq) return;
  if (r.data && r.data.yaml !== undefined) {
    $("yaml").value = r.data.yaml;
    $("saved").textContent = "";
    remember(r.data.yaml);
  }
  show(r.status, r.data);
}

document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA" || e.target.tagName === "SELECT") return;
  if ((e.ctrlKey || e.metaKey) && e.key === "z") { e.preventDefault(); undo(); }
  if ((e.ctrlKey || e.metaKey) && (e.key === "y" || e.key === "Z")) { e.preventDefault(); redo(); }
  if (e.key === "Escape") { state.connectFrom = null; $("hint").textContent = ""; select(null); }
  if (e.key === "Delete" || e.key === "Backspace") {
    const s = state.selected;
    if (s && s.kind === "actor" && !s.path.includes("/")) removeActor(s.path);
    if (s && s.kind === "channel" && !s.prefix) { state.selected = null; edit([{ op: "remove_channel", from: s.channel.from, to: s.channel.to }]); }
  }
});
$("graph").addEventListener("click", () => { state.connectFrom = null; $("hint").textContent = ""; select(null); });
$("undo").addEventListener("click", undo);
$("redo").addEventListener("click", redo);

// ---- check's verdict -------------------------------------------------------

// showReport writes check's verdict and findings.
function showReport(report) {
  const v = $("verdict");
  let text = "valid", cls = "ok";
  if (!report.valid) { text = "invalid"; cls = "bad"; }
  else if (!report.consistent) { text = "inconsistent"; cls = "bad"; }
  else if (report.deadlock) { text = "deadlock"; cls = "bad"; }
  v.textContent = text;
  v.className = "verdict " + cls;
  const out = [];
  if (report.errors && report.errors.length) out.push("errors:\n  " + report.errors.join("\n  "));
  if (report.repetitions) out.push("repetitions: " + Object.entries(report.repetitions).map(([k, n]) => k + "=" + n).join(" "));
  if (report.deadlock) out.push("deadlock; blocked: " + (report.blocked || []).join(" "));
  if (report.initialize) out.push("initialise: " + Object.entries(report.initialize).map(([k, n]) => k + " with " + n).join(", "));
  if (report.warnings && report.warnings.length) out.push("warnings:\n  " + report.warnings.join("\n  "));
  $("findings").textContent = out.join("\n");
}

function showErrors(errs) {
  $("errors").textContent = (errs || []).join("\n");
}

// show puts one answer of /api/graph, /api/check or /api/edit on the page.
// A graph that does not validate comes with its sketch: it is drawn, and
// the verdict says invalid.
function show(status, data) {
  if (status === 200) {
    showErrors([]);
    $("title").textContent = "sluice: " + data.graph.name;
    state.graph = data.graph; state.report = data.report; state.mapping = data.mapping;
    drawGraph(data.graph, data.report, data.mapping);
    showReport(data.report);
  } else {
    showErrors(data.errors);
    const v = $("verdict");
    v.textContent = data.graph ? "invalid" : "error";
    v.className = "verdict bad";
    $("findings").textContent = "";
    if (data.graph) {
      state.graph = data.graph; state.report = null;
      drawGraph(data.graph, null, state.mapping);
    }
  }
  showPanel();
}

let timer = null;
let seq = 0;
// checkSoon verifies the text area 300 ms after the last keystroke; only the
// newest answer is shown.
function checkSoon() {
  clearTimeout(timer);
  timer = setTimeout(checkNow, 300);
}

async function checkNow() {
  clearTimeout(timer);
  const mine = ++seq;
  const text = $("yaml").value;
  const r = await api("POST", "/api/check", text);
  if (mine !== seq) return;
  if (r.status === 200 || r.data.graph) remember(text);
  show(r.status, r.data);
}

async function save() {
  const r = await api("POST", "/api/save", $("yaml").value);
  if (r.status === 200) {
    $("saved").textContent = "saved";
    show(r.status, r.data);
  } else {
    $("saved").textContent = "not saved";
    showErrors(r.data.errors);
  }
}

// saveMapping writes the placements set in the side panel to the mapping
// file (--mapping, or FILE-map.yaml).
async function saveMapping() {
  const r = await api("POST", "/api/mapping/save", "");
  if (r.status === 200) {
    $("saved").textContent = "mapping saved to " + r.data.path;
  } else {
    $("saved").textContent = "mapping not saved: " + (r.data.errors || []).join("; ");
  }
}

async function load() {
  const [r, b] = await Promise.all([api("GET", "/api/graph"), api("GET", "/api/builtins")]);
  if (b.status === 200) builtins = b.data;
  if (r.status === 200) { $("yaml").value = r.data.yaml; remember(r.data.yaml); }
  show(r.status, r.data);
}

// ---- Go generation ---------------------------------------------------------

async function generateGo() {
  const r = await api("POST", "/api/gogen", $("yaml").value);
  const box = $("gobox");
  box.style.display = "block";
  if (r.status !== 200) {
    $("gocode").textContent = (r.data.errors || []).join("\n");
    $("godownload").style.display = "none";
    return;
  }
  $("gocode").textContent = r.data.go;
  const a = $("godownload");
  a.href = URL.createObjectURL(new Blob([r.data.go], { type: "text/x-go" }));
  a.style.display = "inline";
}

$("yaml").addEventListener("input", () => { $("saved").textContent = ""; checkSoon(); });
$("save").addEventListener("click", save);
$("savemap").addEventListener("click", saveMapping);
$("gengo").addEventListener("click", generateGo);
$("goclose").addEventListener("click", () => { $("gobox").style.display = "none"; });


// loadCluster draws the broker tree, its workers and their devices when
// the server was started with --broker (GET /api/cluster answers 404
// otherwise, and the panel stays empty).
async function loadCluster() {
  const r = await api("GET", "/api/cluster");
  const box = $("cluster");
  if (r.status !== 200) {
    if (r.status !== 404) box.textContent = "cluster: " + ((r.data.errors || []).join("; ") || r.status);
    return;
  }
  box.replaceChildren(html("h2", "", "cluster"));
  const brokers = r.data.brokers || [], workers = r.data.workers || [];
  const byParent = {};
  for (const b of brokers) (byParent[b.parent || ""] = byParent[b.parent || ""] || []).push(b);
  const names = new Set(brokers.map((b) => b.name));
  const roots = brokers.filter((b) => !b.parent || !names.has(b.parent));
  const drawBroker = (b, into) => {
    const li = html("li", "broker", "broker " + b.name);
    li.dataset.broker = b.name;
    const ul = html("ul");
    for (const w of workers.filter((w) => w.broker === b.name)) {
      const wl = html("li", "worker", "worker " + w.name + (w.jobs ? " (" + w.jobs + " jobs)" : ""));
      wl.dataset.worker = w.name;
      const dl = html("ul");
      for (const d of w.devices || []) {
        const mem = d.global_mem ? " " + (d.global_mem / (1 << 30)).toFixed(1) + " GiB" : "";
        dl.appendChild(html("li", "device", d.id + ": " + (d.name || d.backend) + mem));
      }
      wl.appendChild(dl);
      ul.appendChild(wl);
    }
    for (const c of byParent[b.name] || []) drawBroker(c, ul);
    li.appendChild(ul);
    into.appendChild(li);
  };
  const tree = html("ul", "tree");
  for (const b of roots) drawBroker(b, tree);
  box.appendChild(tree);
}

// showFirings writes one row per actor of a run's progress.
function showFirings(run) {
  const t = $("firings");
  t.replaceChildren();
  for (const a of run.actors) {
    const tr = document.createElement("tr");
    tr.dataset.actor = a.name;
    for (const v of [a.name, a.firings, a.done ? "done" : ""]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    t.appendChild(tr);
  }
}


let events = null;
// startRun starts a run of the file, follows its progress over server-sent
// events and, once it ends, shows predicted vs measured throughput and
// draws its timeline.
async function startRun() {
  const n = $("iterations").value || "1000";
  const r = await api("POST", "/api/run/start?iterations=" + encodeURIComponent(n));
  if (r.status !== 202) {
    $("runstate").textContent = (r.data.errors || []).join("; ");
    return;
  }
  $("runstate").textContent = "running";
  $("timeline").style.display = "none";
  $("compare").replaceChildren();
  if (events) events.close();
  events = new EventSource("/api/run/events" + (token ? "?token=" + encodeURIComponent(token) : ""));
  events.onmessage = (e) => showFirings(JSON.parse(e.data));
  waitRun();
}

async function waitRun() {
  const st = await api("GET", "/api/run/state");
  if (st.data.running) { setTimeout(waitRun, 200); return; }
  const last = await api("GET", "/api/run");
  if (last.status === 200) showFirings(last.data);
  if (events) { events.close(); events = null; }
  $("runstate").textContent = st.data.error ? "failed: " + st.data.error : "done";
  const cmp = await api("GET", "/api/run/compare");
  if (cmp.status === 200) showCompare(cmp.data);
  if (st.data.trace) startTimeline();
}

function rate(v) {
  if (!v) return "–";
  return v >= 1e6 ? (v / 1e6).toFixed(2) + " M" : v >= 1e3 ? (v / 1e3).toFixed(2) + " k" : v.toFixed(1) + " ";
}

// showCompare writes the simulator's throughput beside the run's, for the
// graph (iterations/s) and each actor (firings/s).
function showCompare(c) {
  const t = $("compare");
  t.replaceChildren();
  const cap = html("caption", "", "predicted (simulator: " + c.machine + ", " + c.simulated + " iterations) vs measured");
  t.appendChild(cap);
  const row = (cells, cls, actor) => {
    const tr = html("tr", cls);
    if (actor !== undefined) tr.dataset.actor = actor;
    for (const v of cells) tr.appendChild(html(cls === "head" ? "th" : "td", "", v));
    t.appendChild(tr);
  };
  const ratio = (p) => (p.predicted && p.measured ? (p.measured / p.predicted).toFixed(2) : "–");
  row(["", "q", "predicted /s", "measured /s", "measured ÷ predicted"], "head");
  row(["graph (iterations)", "", rate(c.graph.predicted), rate(c.graph.measured), ratio(c.graph)], "graphrow", "");
  for (const a of c.actors) row([a.name, a.repetitions, rate(a.predicted), rate(a.measured), ratio(a)], "", a.name);
  if (c.notes && c.notes.length) t.appendChild(html("caption", "notes", c.notes.join("; ")));
}

// ---- timeline --------------------------------------------------------------

// timeline is the drawn window of the last run's trace: the server
// aggregates the firings into one bucket per pixel column and worker
// (GET /api/run/trace?from=&to=&px=), so the page never holds the events.
const timeline = { t0: 0, t1: 1, from: 0, to: 1, data: null, fetching: null };
const LEFT = 110;

function timelineWidth() {
  const c = $("timeline");
  return Math.max(10, c.width - LEFT - 10);
}

async function startTimeline() {
  const c = $("timeline");
  c.width = c.parentElement.clientWidth || 900;
  const r = await api("GET", "/api/run/trace?px=" + timelineWidth());
  if (r.status !== 200) return;
  c.style.display = "block";
  timeline.t0 = timeline.from = r.data.t0;
  timeline.t1 = timeline.to = r.data.t1 > r.data.t0 ? r.data.t1 : r.data.t0 + 1;
  showBuckets(r.data);
}

function showBuckets(d) {
  timeline.data = d;
  const c = $("timeline");
  c.dataset.from = d.from;
  c.dataset.to = d.to;
  c.dataset.firings = d.firings;
  c.height = 30 + 22 * d.rows.length;
  drawTimeline();
}

// fetchWindow asks the server for the buckets of the current window, 120
// ms after the last zoom; the newest answer wins.
function fetchWindow() {
  clearTimeout(timeline.fetching);
  timeline.fetching = setTimeout(async () => {
    const { from, to } = timeline;
    const r = await api("GET", "/api/run/trace?px=" + timelineWidth() + "&from=" + from + "&to=" + to);
    if (r.status === 200 && timeline.from === from && timeline.to === to) showBuckets(r.data);
  }, 120);
}

// colour gives the i-th actor of the trace a hue of its own (golden-angle
// steps, so neighbours differ).
function colour(i) {
  return "hsl(" + Math.round((i * 137.508) % 360) + ",60%,55%)";
}

// drawTimeline paints the buckets held, stretched to the current window
// (they are the exact ones once the window's answer comes).
function drawTimeline() {
  const d = timeline.data;
  if (!d) return;
  const c = $("timeline"), ctx = c.getContext("2d");
  const w = timelineWidth();
  const { from, to } = timeline;
  ctx.clearRect(0, 0, c.width, c.height);
  ctx.font = "11px monospace";
  const bw = (d.to - d.from) / d.px;
  d.rows.forEach((r, i) => {
    ctx.fillStyle = "#333";
    ctx.fillText(r.name, 4, 34 + 22 * i);
    for (let k = 0; k < r.busy.length; k++) {
      if (!(r.busy[k] > 0)) continue;
      const t = d.from + k * bw;
      const x0 = LEFT + ((t - from) / (to - from)) * w;
      const x1 = LEFT + ((t + bw - from) / (to - from)) * w;
      if (x1 < LEFT || x0 > LEFT + w) continue;
      ctx.fillStyle = r.actor[k] >= 0 ? colour(r.actor[k]) : "#999";
      const h = Math.max(2, 18 * r.busy[k]);
      ctx.fillRect(Math.max(x0, LEFT), 40 + 22 * i - h, Math.max(1, Math.min(x1, LEFT + w) - Math.max(x0, LEFT)), h);
    }
  });
  ctx.fillStyle = "#333";
  ctx.fillText(from.toFixed(1) + " µs", LEFT, 12);
  ctx.fillText(to.toFixed(1) + " µs", LEFT + w - 90, 12);
  ctx.fillText(d.firings + " firings in view", LEFT + w / 2 - 50, 12);
  legend(d);
}

function legend(d) {
  const box = $("legend");
  box.replaceChildren();
  for (const [i, a] of d.actors.entries()) {
    const s = html("span", "key", a);
    s.style.borderLeft = "10px solid " + colour(i);
    box.appendChild(s);
  }
}

// The wheel zooms the timeline around the pointer.
$("timeline").addEventListener("wheel", (e) => {
  e.preventDefault();
  const w = timelineWidth();
  const f = Math.min(1, Math.max(0, (e.offsetX - LEFT) / w));
  const { from, to } = timeline;
  const at = from + f * (to - from);
  const k = e.deltaY < 0 ? 0.8 : 1.25;
  timeline.from = Math.max(timeline.t0, at - (at - from) * k);
  timeline.to = Math.min(timeline.t1, at + (to - at) * k);
  if (!(timeline.to > timeline.from)) { timeline.from = from; timeline.to = to; }
  drawTimeline();
  fetchWindow();
});
$("run").addEventListener("click", startRun);
$("stop").addEventListener("click", () => api("POST", "/api/run/stop"));
load();
loadCluster();
