// sluice ui's page: the graph drawn large (pan, zoom, fit) and edited on
// the drawing (POST /api/edit, undo/redo), composites expanded in place,
// check's findings painted on it and listed, a YAML side panel kept in sync
// both ways, Go generation, runs with figures on the drawing, a throughput
// chart, predicted vs measured throughput and a timeline. See docs/ui.md.
import { state, api, events, $, html, withToken, rate } from "./common.js";
import { drawGraph, drawLegend, findActor, addDetail, addDetailIn, wireDrawing, chainsChanged, foldedChainOf, fusedChains, warmUp } from "./draw.js";
import { view, setBounds, wire, zoomTo, fit, refit, centreActor, openGroup, visibleRect } from "./view.js";
import { showFigures, resetRun, clearFigures, belongs, redraw, throughputFromTrace, watchChart } from "./live.js";
import { startTimeline, wireTimeline } from "./timeline.js";

// ---- drawing -------------------------------------------------------------

// handlers are what the drawing's elements call.
// A box clicked in the overview (no text to read) is also centred at a
// legible zoom.
const handlers = { select: (s) => { select(s); if (s.kind === "actor" && view.lod === "overview") centreActor(s.path); }, toggle: (p) => toggleComposite(p),
  chain: (name) => toggleChain(name), connect: (a, b) => connect(a, b), port: (r, d) => portClick(r, d) };

// redrawGraph draws the graph held; keep says to keep the view (an edit).
// Each drawing's time is kept in #graph's data: data-draws-ms its script
// (layout, the SVG written, the view), data-frames-ms the wall-clock time
// from t0 (the graph's answer came; else the call) to the frame painted
// (a requestAnimationFrame, then a task after that frame: the browser's
// style, layout and paint of the SVG, and the rest of the page's work
// for the answer, are in it).
function redrawGraph(keep, t0 = performance.now()) {
  if (!state.graph) return;
  const s0 = performance.now();
  $("graph").classList.remove("stale");
  const b = drawGraph(state.graph, state.report, handlers);
  drawLegend(state.graph); // before the view: it takes room from the pane
  setBounds(b, keep && view.bounds.boxes.length > 0, b.boxes.length);
  if (state.selected && state.selected.kind === "actor") addDetail(state.selected.path);
  markSelection();
  if (state.run) showFigures(state.run);
  const g = $("graph"), ms = (performance.now() - s0).toFixed(1);
  requestAnimationFrame(() => setTimeout(() => { g.dataset.framesMs = (g.dataset.framesMs ? g.dataset.framesMs + " " : "") + (performance.now() - t0).toFixed(1); }, 0));
  g.dataset.drawsMs = (g.dataset.drawsMs ? g.dataset.drawsMs + " " : "") + ms;
}

// showDetail gives the boxes in view their text once the zoom is legible
// (a big graph's boxes have none until then), once per frame at most.
let detailFrame = 0;
view.onChange = () => {
  if (view.lod === "overview" || detailFrame) return;
  detailFrame = requestAnimationFrame(() => {
    detailFrame = 0;
    const r = visibleRect(), room = view.bounds.room || 0, m = 150;
    if (addDetailIn(r.x0 - m, r.y0 - room - m, r.x1 + m, r.y1 - room + m)) markSelection();
  });
};

function toggleComposite(path) {
  if (state.expanded.has(path)) {
    for (const p of [...state.expanded]) if (p === path || p.startsWith(path + "/")) state.expanded.delete(p);
  } else state.expanded.add(path);
  redrawGraph(true);
}

// toggleChain opens a folded fused chain (its actors drawn in a frame) or
// folds an opened one; opened from the overview, the view zooms to its
// actors; a view the user did not move takes the new drawing's initial
// one.
function toggleChain(name) {
  const open = !state.openChains.has(name);
  if (open) state.openChains.add(name); else state.openChains.delete(name);
  const overview = view.lod === "overview";
  redrawGraph(true);
  if (open && overview) zoomTo(fusedChains().get(name) || []);
  else if (!view.touched) refit();
}

// reveal opens the composites around an actor and the fused chain folded
// over it, so that it is drawn; says whether it drew the graph again.
function reveal(path) {
  const parts = path.split("/");
  let opened = false;
  for (let i = 1; i < parts.length; i++) {
    const c = parts.slice(0, i).join("/");
    if (!state.expanded.has(c)) { state.expanded.add(c); opened = true; }
  }
  const chain = foldedChainOf(path);
  if (chain) { state.openChains.add(chain); opened = true; }
  if (opened) redrawGraph(true);
  return opened;
}

// ---- search ------------------------------------------------------------------

// actorPaths lists every actor of the graph, composites' inner ones as
// "comp/inner".
function actorPaths(g, prefix = "") {
  const out = [];
  for (const a of (g && g.actors) || []) {
    out.push(prefix + a.name);
    if (a.sub) out.push(...actorPaths(a.sub, prefix + a.name + "/"));
  }
  return out;
}

// search finds an actor by name (exactly, else the first that starts with
// or contains the text, case aside), opens the composites and the fused
// chain around it, selects it and centres it at a legible zoom.
function search(text) {
  const q = text.trim().toLowerCase();
  const box = $("search");
  if (!q || !state.graph) return;
  const paths = actorPaths(state.graph);
  const base = (p) => p.split("/").pop().toLowerCase();
  const hit = paths.find((p) => p.toLowerCase() === q) || paths.find((p) => base(p) === q) ||
    paths.find((p) => base(p).startsWith(q)) || paths.find((p) => p.toLowerCase().includes(q));
  box.classList.toggle("miss", !hit);
  box.title = hit ? "" : "no actor named like " + JSON.stringify(text.trim());
  if (!hit) return;
  reveal(hit);
  select({ kind: "actor", path: hit });
  centreActor(hit);
  box.dataset.found = hit;
}

// fillSearch offers the graph's actors as the search box's suggestions
// (written again only when they changed), once the drawing is painted (a
// big graph's hundreds of suggestions are no part of its first frame).
function fillSearch() {
  requestAnimationFrame(() => setTimeout(fillSuggestions, 0));
}

function fillSuggestions() {
  const list = $("actornames"), paths = actorPaths(state.graph), key = paths.join("\n");
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  // One markup string, parsed at once (hundreds of elements made one by
  // one cost several times more).
  list.innerHTML = paths.map((p) => '<option value="' + p.replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";") + '">').join("");
}
$("search").addEventListener("keydown", (e) => {
  e.stopPropagation();
  if (e.key === "Enter") search(e.target.value);
  if (e.key === "Escape") e.target.blur();
});
$("search").addEventListener("change", (e) => search(e.target.value));

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
  if (sel && sel.kind === "actor") addDetail(sel.path);
  markSelection();
  showPanel();
  showLine(selectedLine(sel));
}

// selectedLine is the YAML line of the selected actor or channel (0: none).
function selectedLine(sel) {
  if (!sel || !state.graph) return 0;
  if (sel.kind === "actor") { const a = findActor(state.graph, sel.path); return (a && !sel.path.includes("/") && a.line) || 0; }
  return (!sel.prefix && sel.channel.line) || 0;
}

// showLine selects a line of the YAML text and scrolls to it (once the
// panel shows: folded, the text is not laid out; see toggleYAML).
function showLine(line) {
  if (!line) return;
  const t = $("yaml"), lines = t.value.split("\n");
  let at = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) at += lines[i].length + 1;
  t.setSelectionRange(at, at + (lines[line - 1] || "").length);
  t.dataset.line = line;
  scrollToLine();
}

// scrollToLine scrolls the YAML text to the line selected last, when the
// panel shows.
function scrollToLine() {
  const t = $("yaml");
  if (t.dataset.line && !$("editor-pane").classList.contains("collapsed")) t.scrollTop = Math.max(0, (t.dataset.line - 5) * 17.4);
}

// selectionPaths are the actors to zoom to: the selected actor, or a
// selected channel's two ends.
function selectionPaths() {
  const s = state.selected;
  if (s && s.kind === "actor") return [s.path];
  if (s && s.kind === "channel") return [s.channel.from, s.channel.to].map((e) => s.prefix + e.split(".")[0]);
  return [];
}

function markSelection() {
  for (const e of document.querySelectorAll("#graph .selected, #graph .pending")) e.classList.remove("selected", "pending");
  const s = state.selected;
  if (s && s.kind === "actor") {
    const n = document.querySelector('#graph g.node[data-actor="' + CSS.escape(s.path) + '"]');
    if (n) n.classList.add("selected");
  }
  if (s && s.kind === "channel") {
    const n = document.querySelector('#graph .edge[data-channel="' + CSS.escape(s.prefix + s.channel.name) + '"]');
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
// The palette, already shown, stays as it is (with what is typed in it).
function showPanel() {
  const p = $("panel");
  const s = state.selected;
  const a = s && s.kind === "actor" && state.graph && findActor(state.graph, s.path);
  const pal = !a && !(s && s.kind === "channel");
  if (pal && p.dataset.shows === "palette" && p.dataset.builtins === String((builtins || []).length)) return;
  p.replaceChildren();
  p.dataset.shows = pal ? "palette" : "";
  p.dataset.builtins = String((builtins || []).length);
  if (a) return actorPanel(p, s.path, a);
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
  $("panel").dataset.shows = ""; // the answer shows the palette anew, empty
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
  if (r.status !== 200) { refused("placement", r.data.errors); return; }
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
  if (r.status !== 200) { refused("edit", r.data.errors); return; }
  if (r.data && r.data.yaml !== undefined) {
    $("yaml").value = r.data.yaml;
    $("saved").textContent = "";
    remember(r.data.yaml);
  }
  show(r.status, r.data, r.at);
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
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "/") { e.preventDefault(); $("search").focus(); }
  if (e.key === "f") { view.touched = true; fit(); }
  if (e.key === "s") zoomTo(selectionPaths());
  if (e.key === "y") toggleYAML();
  if (e.key === "+" || e.key === "=") $("zoomin").click();
  if (e.key === "-") $("zoomout").click();
});
$("graph").addEventListener("click", () => { state.connectFrom = null; $("hint").textContent = ""; select(null); });
$("undo").addEventListener("click", undo);
$("redo").addEventListener("click", redo);

// toggleYAML shows or hides the YAML side panel (remembered). Folded, its
// text is not laid out at all (style.css): a big graph's YAML, set as the
// graph comes, would otherwise take the opening drawing's frame longer to
// lay out than the drawing (1300 lines: about 60 ms); shown again, it
// scrolls to the line selected meanwhile.
function toggleYAML(open) {
  const p = $("editor-pane");
  const show = open === undefined ? p.classList.contains("collapsed") : open;
  p.classList.toggle("collapsed", !show);
  if (show) scrollToLine();
  $("yamltoggle").classList.toggle("on", show);
  try { localStorage.setItem("sluice.yaml", show ? "1" : "0"); } catch (e) { /* private mode */ }
  setTimeout(() => { if (view.bounds.boxes.length) refit(); }, 200);
}
$("yamltoggle").addEventListener("click", () => toggleYAML());
try { if (localStorage.getItem("sluice.yaml") === "1") toggleYAML(true); } catch (e) { /* private mode */ }

// ---- check's verdict -------------------------------------------------------

// showReport writes check's verdict and its findings as a list; each
// finding selects what it is about on the drawing and in the YAML.
// Findings of one shape (the same words, other names or figures) fold into
// one line with their count, which opens to list them.
function showReport(report, parsed) {
  const v = $("verdict");
  let text = "valid", cls = "ok";
  if (!parsed) { text = "error"; cls = "bad"; }
  else if (!report.valid) { text = "invalid"; cls = "bad"; }
  else if (!report.consistent) { text = "inconsistent"; cls = "bad"; }
  else if (report.deadlock) { text = "deadlock"; cls = "bad"; }
  v.textContent = text;
  v.className = "verdict " + cls;
  const box = $("findings");
  box.replaceChildren(html("h2", "", "findings"));
  const ul = html("ul");
  for (const grp of foldFindings(findings(report))) {
    const f = grp[0];
    const li = findingItem(f);
    if (grp.length > 1) {
      li.classList.add("folded");
      const n = html("span", "count", "×" + grp.length);
      n.title = "show the " + grp.length + " findings like this one";
      li.prepend(n);
      const sub = html("ul", "members");
      for (const g of grp) sub.appendChild(findingItem(g));
      n.addEventListener("click", (e) => { e.stopPropagation(); li.classList.toggle("open"); });
      li.appendChild(sub);
    }
    ul.appendChild(li);
  }
  box.appendChild(ul);
  if (report.repetitions) box.appendChild(repetitions(report.repetitions));
}

function findingItem(f) {
  const li = html("li", f.cls);
  li.appendChild(html("span", "text", f.text));
  if (f.actor) li.dataset.actor = f.actor;
  if (f.channel) li.dataset.channel = f.channel;
  if (f.pick) li.addEventListener("click", (e) => { e.stopPropagation(); f.pick(); });
  return li;
}

// shapeOf is a finding's words without its names and figures: findings of
// one shape fold together.
function shapeOf(f) {
  return f.cls + ":" + f.text.replace(/[\w.:/\->]*\d[\w.:/\->]*/g, "#").replace(/\b[\w./\->]+\.[\w\->]+\b/g, "@");
}

// foldFindings groups the findings by shape, in their order; a shape met
// fewer than 3 times stays as separate findings.
function foldFindings(list) {
  const by = new Map();
  for (const f of list) {
    const k = shapeOf(f);
    (by.get(k) || by.set(k, []).get(k)).push(f);
  }
  const out = [];
  for (const grp of by.values()) {
    if (grp.length >= 3) out.push(grp);
    else for (const f of grp) out.push([f]);
  }
  return out;
}

// repetitions writes the repetition vector, actors of one count folded
// ("=1 for 240 actors (a000 … a255)") when eight or more share it.
function repetitions(reps) {
  const div = html("div", "reps");
  const byQ = new Map();
  for (const [k, n] of Object.entries(reps)) (byQ.get(n) || byQ.set(n, []).get(n)).push(k);
  const parts = [];
  for (const [n, names] of byQ) {
    if (names.length < 8) { for (const k of names) parts.push(k + "=" + n); continue; }
    const all = byQ.size === 1 ? "all " : "";
    parts.push("=" + n + " for " + all + names.length + " actors (" + names[0] + " … " + names[names.length - 1] + ")");
  }
  div.textContent = "repetitions: " + parts.join(" ");
  div.title = Object.entries(reps).map(([k, n]) => k + "=" + n).join(" ");
  return div;
}

// channelByName finds a top-level channel of the graph.
function channelByName(name) {
  return state.graph && state.graph.channels.find((c) => c.name === name);
}

function pickChannel(name) {
  const c = channelByName(name);
  return c ? () => select({ kind: "channel", prefix: "", channel: c }) : null;
}

function pickActor(name) {
  return () => { reveal(name); select({ kind: "actor", path: name }); zoomTo([name]); };
}

// findings turns the report's structured results into list items.
function findings(report) {
  const out = [];
  const inc = report.inconsistency;
  for (const e of report.errors || []) {
    const paths = inc && inc.actors && e.startsWith("inconsistent rates");
    out.push({ cls: "bad", text: shortPath(e), actor: paths ? inc.target : undefined,
      pick: paths ? () => { select({ kind: "actor", path: inc.target }); zoomTo(inc.actors); } : lineOf(e) });
  }
  for (const b of report.blocked_actors || []) {
    const w = (b.waits || []).map((w) => w.channel + " " + w.state + " (" + w.tokens + (w.state === "full" ? " of " + w.capacity : "") + " tokens, needs " + w.need + ")").join("; ");
    out.push({ cls: "bad", actor: b.actor, text: b.actor + " blocked after " + b.fired + " of " + b.target + " firings: waits on " + w, pick: pickActor(b.actor) });
  }
  for (const cy of report.cycles || []) out.push({ cls: "bad", channel: cy[0], text: "deadlocked cycle: " + cy.join(" → "), pick: pickChannel(cy[0]) });
  for (const [c, n] of Object.entries(report.initialize || {})) out.push({ cls: "warn", channel: c, text: "give " + c + " " + n + " initial token" + (n > 1 ? "s" : ""), pick: pickChannel(c) });
  for (const [c, n] of Object.entries(report.enlarge || {})) out.push({ cls: "warn", channel: c, text: "enlarge " + c + " to capacity " + n, pick: pickChannel(c) });
  if (report.critical && report.critical.length) {
    // The server's report carries the driver's prediction on the
    // workbench's machine model: the number the Tables' "predicted" shows.
    const bound = report.iterations_per_second ? " — predicted " + rate(report.iterations_per_second) + "iterations/s on the workbench's machine model (the Tables' prediction)" : "";
    const whole = report.critical.length >= Object.keys(report.repetitions || {}).length;
    const who = whole && report.critical.length > 8 ? "the whole graph (" + report.critical.length + " actors)" : nameList(report.critical, 8);
    out.push({ cls: "warn", actor: report.critical[0], text: "bottleneck (analysis): " + who + bound, pick: () => { select({ kind: "actor", path: report.critical[0] }); zoomTo(report.critical); } });
  }
  for (const w of report.warnings || []) out.push({ cls: "warn", text: w, pick: lineOf(w) });
  if (!out.length && report.valid && report.consistent && !report.deadlock) out.push({ cls: "info", text: "consistent, no deadlock" });
  return out;
}

// shortPath writes a message's file:line:col with the file's base name.
function shortPath(msg) {
  return msg.replace(/(^|\s)\S*\/([^\s/]+\.(?:ya?ml|xml):\d+)/g, "$1$2");
}

// lineOf makes a message that names file:line:col select that YAML line.
function lineOf(msg) {
  const m = msg.match(/\.ya?ml:(\d+):\d+/);
  return m ? () => { toggleYAML(true); showLine(parseInt(m[1], 10)); } : null;
}

function showErrors(errs) {
  $("errors").textContent = (errs || []).join("\n");
}

// refused shows a request the server refused (an edit, a placement) at
// the top of the findings; the graph stays as it was.
function refused(what, errs) {
  const ul = $("findings").querySelector("ul");
  if (!ul) return;
  for (const old of ul.querySelectorAll("li.refused")) old.remove();
  const li = html("li", "bad refused", what + " refused: " + (errs || []).join("; "));
  li.addEventListener("click", () => li.remove());
  li.title = "click to dismiss";
  ul.prepend(li);
}

// show puts one answer of /api/graph or /api/edit on the page. A graph
// that does not validate comes with its sketch: it is drawn, and the
// verdict says invalid; YAML that does not parse has no graph: the
// drawing stays, greyed, without a run's figures. Either way the errors
// are findings (the side panel), with the YAML shown or not. at is when
// the answer came.
function show(status, data, at) {
  if (status !== 200) data = { graph: data.graph || null, yaml: data.yaml, report: { valid: false, errors: data.errors || ["answer " + status] } };
  const report = data.report || { valid: false, errors: [] };
  showErrors(report.valid ? [] : report.errors);
  if (data.graph) {
    $("title").textContent = "sluice: " + (data.graph.name || "");
    const first = !state.graph;
    state.graph = data.graph; state.report = report.valid ? report : null; state.mapping = data.mapping;
    redrawGraph(!first, at);
    fillSearch();
  } else {
    $("graph").classList.add("stale");
    if (state.graph) state.graph = Object.assign({}, state.graph, { id: "" });
    clearFigures();
  }
  showReport(report, !!data.graph);
  runNote();
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

// checkNow checks the text area: POST /api/edit without edits answers
// check's report, findings included (200 for YAML that does not parse or
// validate).
async function checkNow() {
  clearTimeout(timer);
  const mine = ++seq;
  const text = $("yaml").value;
  const r = await api("POST", "/api/edit", JSON.stringify({ yaml: text, ops: [] }));
  if (mine !== seq) return;
  if (r.status === 200 && r.data.graph) remember(text);
  show(r.status, r.data, r.at);
}

async function save() {
  const r = await api("POST", "/api/save", $("yaml").value);
  if (r.status === 200) {
    $("saved").textContent = "saved";
    show(r.status, r.data);
  } else {
    $("saved").textContent = "not saved";
    showErrors(r.data.errors);
    refused("save", r.data.errors);
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

// load asks for the graph; should the answer take longer than 100 ms (the
// server checks a big graph for seconds), the page compiles its drawing
// code meanwhile (warmUp) rather than in the opening drawing's time.
async function load() {
  const graph = api("GET", "/api/graph");
  let came = false;
  graph.then(() => { came = true; }, () => { came = true; });
  setTimeout(() => { if (!came && !state.graph) warmUp(); }, 100);
  const [r, b] = await Promise.all([graph, api("GET", "/api/builtins")]);
  if (b.status === 200) builtins = b.data;
  if (r.data.yaml !== undefined) { $("yaml").value = r.data.yaml; remember(r.data.yaml); }
  show(r.status, r.data, r.at);
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
// the server was started with --broker (otherwise GET /api/cluster answers
// broker: false, and the panel stays empty).
async function loadCluster() {
  const r = await api("GET", "/api/cluster");
  const box = $("cluster");
  if (r.status !== 200) {
    box.textContent = "cluster: " + ((r.data.errors || []).join("; ") || r.status);
    return;
  }
  if (!r.data.broker) return;
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

// showRun puts a snapshot of the run on the drawing (when it is of the
// graph drawn) and in the table. The longest it took is kept in #graph's
// data-figures-ms.
function showRun(run) {
  const t0 = performance.now(), shown = state.runShown;
  showFigures(run);
  const g = $("graph"), ms = performance.now() - t0;
  if (!(ms <= +g.dataset.figuresMs)) g.dataset.figuresMs = ms.toFixed(1);
  g.dataset.updates = (+g.dataset.updates || 0) + 1;
  // A run that ended reported its fused chains: the drawing folds them.
  if (chainsChanged()) { redrawGraph(true); if (!view.touched) refit(); }
  else if (shown !== state.runShown) drawLegend(state.graph);
  showFirings(run);
  runNote();
}

// runNote says, beside the run's state, when the drawing does not show the
// last run's figures because it shows another graph.
function runNote() {
  const n = $("runnote");
  const other = state.run && state.run.actors && state.run.actors.length && !belongs(state.run);
  n.textContent = other ? "figures hidden: another graph" : "";
  n.title = other ? "the run's figures belong to the graph it ran (the file as saved): the drawing shows another one; they come back with that graph" : "";
  if (!other && !state.runShown && state.run && belongs(state.run)) showFigures(state.run);
}

// showFirings writes one row per actor of a run's progress.
function showFirings(run) {
  const t = $("firings");
  t.replaceChildren();
  for (const a of run.actors) {
    const tr = document.createElement("tr");
    tr.dataset.actor = a.name;
    const share = a.busy_ns / Math.max(1, run.elapsed_ns * (a.replicas || 1));
    for (const v of [a.name, a.firings, Math.round(100 * share) + " % busy", a.done ? "done" : ""]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    t.appendChild(tr);
  }
}

// run is the run going on: its event stream, whether Stop was asked, and
// when it started.
const run = { events: null, stopping: false, going: false, t0: 0, poll: 0 };

// runButtons shows what can be done: Run while no run goes on, Stop while
// one does (until it was asked).
function runButtons() {
  $("run").disabled = run.going;
  $("stop").disabled = !run.going || run.stopping;
}

// startRun starts a run of the file, follows its progress over server-sent
// events until the server's "end" event and, once it ends, shows predicted
// vs measured throughput and draws its timeline.
async function startRun() {
  if (run.going) return;
  const n = $("iterations").value || "1000";
  run.going = true; run.stopping = false; run.t0 = performance.now();
  runButtons();
  $("runstate").textContent = "starting…";
  $("runstate").title = "";
  $("timeline").style.display = "none";
  $("tracedl").style.display = "none";
  $("compare").replaceChildren();
  $("firings").replaceChildren();
  resetRun();
  openDock("chart");
  const r = await api("POST", "/api/run/start?iterations=" + encodeURIComponent(n));
  if (r.status !== 202) {
    run.going = false;
    runButtons();
    $("runstate").textContent = "not started: " + (r.data.errors || []).join("; ");
    return;
  }
  if (!run.stopping) $("runstate").textContent = "running";
  follow();
}

// follow listens to the run's events; the server ends them with "end" once
// the run ended (the page closes the stream first). Should the stream
// fail, the run's state is asked every 500 ms instead.
function follow() {
  closeEvents();
  const es = events("/api/run/events");
  run.events = es;
  es.onmessage = (e) => showRun(JSON.parse(e.data));
  es.addEventListener("end", (e) => { closeEvents(); ended(JSON.parse(e.data)); });
  es.onerror = () => { closeEvents(); pollState(); };
}

function closeEvents() {
  if (run.events) { run.events.close(); run.events = null; }
}

async function pollState() {
  const st = await api("GET", "/api/run/state");
  if (st.status === 200 && !st.data.running) return ended(st.data);
  run.poll = setTimeout(pollState, 500);
}

// ended shows a run that ended: its last snapshot, how it ended, and what
// comes once it ended.
async function ended(st) {
  clearTimeout(run.poll);
  const last = await api("GET", "/api/run");
  if (last.status === 200) showRun(last.data);
  const secs = last.status === 200 ? " after " + (last.data.elapsed_ns / 1e9).toFixed(2) + " s" : "";
  $("runstate").textContent = run.stopping ? "stopped" + secs : st.error ? "failed: " + st.error : "done";
  run.going = false; run.stopping = false;
  runButtons();
  await finishRun(st);
}

// stopRun stops the run: the page says so at once, the server's answer
// confirms it (the run's end follows on the event stream).
async function stopRun() {
  if (!run.going || run.stopping) return;
  run.stopping = true;
  runButtons();
  $("runstate").textContent = "stopping…";
  const r = await api("POST", "/api/run/stop");
  if (r.status !== 200) {
    run.stopping = false;
    runButtons();
    $("runstate").textContent = "stop refused: " + (r.data.errors || []).join("; ");
  } else if (run.going) {
    $("runstate").textContent = r.data.running ? "stopping… (asked)" : "stopped";
  }
}

// finishRun shows what comes once a run ended: predicted vs measured, the
// timeline and the trace's download.
async function finishRun(st) {
  if (st.compare) {
    const cmp = await api("GET", "/api/run/compare");
    if (cmp.status === 200) showCompare(cmp.data);
  }
  if (!st.trace) return;
  const a = $("tracedl");
  a.href = withToken("/api/run/trace");
  a.style.display = "inline";
  // A trace that reached its limit holds the run's first events only.
  let note = "";
  a.textContent = "Download trace";
  a.title = "the run's Chrome Trace Event JSON: open it in ui.perfetto.dev";
  if (st.trace_dropped > 0) {
    note = "the run's first " + st.trace_limit.toLocaleString("en") + " events (" + st.trace_dropped.toLocaleString("en") + " more not kept)";
    a.textContent = "Download trace (first " + st.trace_limit.toLocaleString("en") + " events)";
    a.title = "the first " + st.trace_limit + " events of the run as Chrome Trace Event JSON (open it in ui.perfetto.dev); " +
      st.trace_dropped + " later ones were not kept: sluice run FILE --trace OUT --trace-limit N keeps more";
  }
  startTimeline(note);
  throughputFromTrace();
}

// openDock shows the run panel at a tab.
function openDock(tab) {
  $("dock").classList.add("open");
  for (const b of document.querySelectorAll("#dock .tabs button[data-tab]")) b.classList.toggle("on", b.dataset.tab === tab);
  for (const t of document.querySelectorAll("#dock .tab")) t.classList.toggle("on", t.id === "tab-" + tab);
  if (tab === "chart") redraw();
  setTimeout(refit, 0);
}

for (const b of document.querySelectorAll("#dock .tabs button[data-tab]")) b.addEventListener("click", () => openDock(b.dataset.tab));
$("dockclose").addEventListener("click", () => { $("dock").classList.remove("open"); refit(); });

// checkpointText words a run's checkpoints and recoveries briefly for the
// toolbar ("" without); checkpointDetail gives the figures, for its title.
function checkpointText(c) {
  if (!c) return "";
  let s = ` · ${c.completed} checkpoint${c.completed === 1 ? "" : "s"}`;
  if (c.recoveries) s += ` · ${c.recoveries} recover${c.recoveries === 1 ? "y" : "ies"}`;
  return s;
}
function checkpointDetail(c) {
  if (!c) return "";
  let s = `checkpoints: ${c.completed}, the last ${c.last_bytes} bytes; duration mean ${(c.mean_ns / 1e6).toFixed(1)} ms, max ${(c.max_ns / 1e6).toFixed(1)} ms`;
  if (c.resumed_from) s += `; resumed from checkpoint ${c.resumed_from}`;
  return s + `; recoveries: ${c.recoveries || 0}`;
}

// loadLastRun shows the server's last run when it has one (a saved run
// given to `sluice ui --run-stats`, or a run from before a reload).
async function loadLastRun() {
  const st = await api("GET", "/api/run/state");
  if (st.status !== 200 || st.data.running || !st.data.runs) return;
  const last = await api("GET", "/api/run");
  if (last.status !== 200 || !last.data.actors.length) return;
  openDock("chart");
  showRun(last.data);
  $("runstate").textContent = "last run: " + (last.data.elapsed_ns / 1e6).toFixed(1) + " ms" + checkpointText(last.data.checkpoints);
  $("runstate").title = checkpointDetail(last.data.checkpoints);
  await finishRun(st.data);
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


$("run").addEventListener("click", startRun);
$("stop").addEventListener("click", stopRun);
runButtons();
wire(selectionPaths);
wireDrawing(openGroup);
wireTimeline();
watchChart();
load().then(loadLastRun);
loadCluster();

// nameList writes up to max names, then how many more there are.
function nameList(names, max) {
  if (names.length <= max) return names.join(", ");
  return names.slice(0, max).join(", ") + ` and ${names.length - max} more`;
}
