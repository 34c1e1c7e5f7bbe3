// sluice ui's page: the graph laid out with dagre, check's findings, and a
// YAML editor verified live through POST /api/check. See docs/ui.md.
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

function rates(ports) {
  return ports.map((p) => p.name + ":" + p.rate).join(" ");
}

// drawGraph lays g out with dagre and draws it into the svg; report marks
// blocked actors and channels that need initial tokens.
function drawGraph(g, report, mapping) {
  const svg = $("graph");
  svg.replaceChildren();
  const lay = new dagre.graphlib.Graph({ multigraph: true });
  lay.setGraph({ rankdir: "LR", nodesep: 30, ranksep: 60 });
  lay.setDefaultEdgeLabel(() => ({}));
  for (const a of g.actors) {
    const lines = [a.name];
    if (a.inputs.length) lines.push("in " + rates(a.inputs));
    if (a.outputs.length) lines.push("out " + rates(a.outputs));
    const p = mapping && mapping[a.name];
    if (p) lines.push((p.device || "cpu") + (p.replicas > 1 ? " ×" + p.replicas : ""));
    if (a.sub) lines.push("composite: " + a.sub.actors.length + " actors");
    if (report && report.repetitions && report.repetitions[a.name] !== undefined) lines.push("q=" + report.repetitions[a.name]);
    const w = 16 + 7.5 * Math.max(...lines.map((l) => l.length));
    lay.setNode(a.name, { width: w, height: 16 * lines.length + 10, lines });
  }
  for (const c of g.channels) {
    const init = report && report.initialize && report.initialize[c.name];
    const label = "cap " + (c.capacity || "∞") + " init " + c.initial + (init ? " (needs " + init + ")" : "");
    lay.setEdge(c.from.split(".")[0], c.to.split(".")[0], { label, width: label.length * 7, height: 14, init: !!init }, c.name);
  }
  dagre.layout(lay);
  const blocked = new Set((report && report.blocked) || []);
  for (const e of lay.edges()) {
    const d = lay.edge(e);
    const grp = el("g", { class: "edge" + (d.init ? " init" : ""), "data-channel": e.name });
    const pts = d.points.map((p) => p.x + "," + p.y).join(" L");
    grp.appendChild(el("path", { d: "M" + pts, "marker-end": "url(#arrow)" }));
    grp.appendChild(el("text", { x: d.x - d.width / 2, y: d.y }, d.label));
    svg.appendChild(grp);
  }
  for (const n of lay.nodes()) {
    const d = lay.node(n);
    const grp = el("g", { class: "node" + (blocked.has(n) ? " blocked" : ""), "data-actor": n });
    grp.appendChild(el("rect", { x: d.x - d.width / 2, y: d.y - d.height / 2, width: d.width, height: d.height, rx: 4 }));
    d.lines.forEach((l, i) => grp.appendChild(el("text", { x: d.x - d.width / 2 + 8, y: d.y - d.height / 2 + 17 + 16 * i }, l)));
    svg.appendChild(grp);
  }
  const defs = el("defs", {});
  const m = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" });
  m.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#557" }));
  defs.appendChild(m);
  svg.appendChild(defs);
  const gg = lay.graph();
  svg.setAttribute("viewBox", "0 0 " + (gg.width + 20) + " " + (gg.height + 20));
}

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

// show puts one answer of /api/graph or /api/check on the page.
function show(status, data) {
  if (status === 200) {
    showErrors([]);
    $("title").textContent = "sluice: " + data.graph.name;
    drawGraph(data.graph, data.report, data.mapping);
    showReport(data.report);
  } else {
    showErrors(data.errors);
    const v = $("verdict");
    v.textContent = "error";
    v.className = "verdict bad";
  }
}

let timer = null;
let seq = 0;
// checkSoon verifies the text area 300 ms after the last keystroke; only the
// newest answer is shown.
function checkSoon() {
  clearTimeout(timer);
  timer = setTimeout(async () => {
    const mine = ++seq;
    const r = await api("POST", "/api/check", $("yaml").value);
    if (mine === seq) show(r.status, r.data);
  }, 300);
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

async function load() {
  const r = await api("GET", "/api/graph");
  if (r.status === 200) $("yaml").value = r.data.yaml;
  show(r.status, r.data);
}

$("yaml").addEventListener("input", () => { $("saved").textContent = ""; checkSoon(); });
$("save").addEventListener("click", save);
load();
loadCluster();

// html makes an HTML element with a class and text.
function html(name, cls, text) {
  const e = document.createElement(name);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

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
// events and, once it ends, draws its timeline.
async function startRun() {
  const n = $("iterations").value || "1000";
  const r = await api("POST", "/api/run/start?iterations=" + encodeURIComponent(n));
  if (r.status !== 202) {
    $("runstate").textContent = (r.data.errors || []).join("; ");
    return;
  }
  $("runstate").textContent = "running";
  $("timeline").style.display = "none";
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
  if (st.data.trace) {
    const tr = await api("GET", "/api/run/trace");
    if (tr.status === 200) showTimeline(tr.data);
  }
}

// timeline is the drawn trace: rows per worker, the visible time window.
const timeline = { rows: [], slices: [], t0: 0, t1: 1 };

// showTimeline turns Chrome Trace Event JSON into per-worker rows of
// firings and draws them.
function showTimeline(trace) {
  const names = {};
  const slices = [];
  for (const e of trace.traceEvents || []) {
    if (e.ph === "M" && e.name === "thread_name") names[e.tid] = e.args.name;
    if (e.ph === "X") slices.push(e);
  }
  const tids = [...new Set(slices.map((s) => s.tid))].sort((a, b) => a - b);
  timeline.rows = tids.map((t) => ({ tid: t, name: names[t] || "worker " + t }));
  timeline.slices = slices;
  timeline.t0 = Math.min(...slices.map((s) => s.ts));
  timeline.t1 = Math.max(...slices.map((s) => s.ts + (s.dur || 0)));
  if (!(timeline.t1 > timeline.t0)) timeline.t1 = timeline.t0 + 1;
  const c = $("timeline");
  c.style.display = "block";
  c.width = c.parentElement.clientWidth || 900;
  c.height = 30 + 22 * timeline.rows.length;
  drawTimeline();
}

function colour(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return "hsl(" + h + ",60%,60%)";
}

function drawTimeline() {
  const c = $("timeline"), ctx = c.getContext("2d");
  const left = 110, w = c.width - left - 10;
  const { t0, t1 } = timeline;
  ctx.clearRect(0, 0, c.width, c.height);
  ctx.font = "11px monospace";
  const row = {};
  timeline.rows.forEach((r, i) => {
    row[r.tid] = i;
    ctx.fillStyle = "#333";
    ctx.fillText(r.name, 4, 34 + 22 * i);
  });
  for (const s of timeline.slices) {
    const x0 = left + ((s.ts - t0) / (t1 - t0)) * w;
    const x1 = left + ((s.ts + (s.dur || 0) - t0) / (t1 - t0)) * w;
    if (x1 < left || x0 > left + w) continue;
    ctx.fillStyle = colour(s.name);
    ctx.fillRect(Math.max(x0, left), 22 + 22 * row[s.tid], Math.max(1, x1 - Math.max(x0, left)), 18);
  }
  ctx.fillStyle = "#333";
  ctx.fillText(t0.toFixed(1) + " µs", left, 12);
  ctx.fillText(t1.toFixed(1) + " µs", left + w - 90, 12);
}

// The wheel zooms the timeline around the pointer.
$("timeline").addEventListener("wheel", (e) => {
  e.preventDefault();
  const c = $("timeline"), left = 110, w = c.width - left - 10;
  const f = Math.min(1, Math.max(0, (e.offsetX - left) / w));
  const { t0, t1 } = timeline;
  const at = t0 + f * (t1 - t0);
  const k = e.deltaY < 0 ? 0.8 : 1.25;
  timeline.t0 = at - (at - t0) * k;
  timeline.t1 = at + (t1 - at) * k;
  drawTimeline();
});
$("run").addEventListener("click", startRun);
$("stop").addEventListener("click", () => api("POST", "/api/run/stop"));
