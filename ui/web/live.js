// A run's figures on the drawing (firings/s, busy share as heat, channel
// fill bars, the measured bottleneck; the fused chains it reports, which
// the drawing folds) and the graph's
// throughput over time as a chart (uPlot). The figures belong to the graph
// the run is of (the snapshot's graph_id): they are drawn only on that
// graph, and leave the drawing as soon as it shows another one.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { state, api, $, rate } from "./common.js";

// prev holds the last snapshot seen, for rates over the last interval;
// series the chart's points (seconds, iterations/s).
let prev = null, chart = null;
const series = [[], []];

// belongs reports whether the run's figures are of the graph drawn.
export function belongs(run) {
  return !!(run && state.graph && state.graph.id && run.graph_id === state.graph.id);
}

// resetRun clears the last run before a new one: its figures and its chart
// (a new chart, new axes).
export function resetRun() {
  prev = null;
  series[0].length = 0; series[1].length = 0;
  if (chart) { chart.destroy(); chart = null; }
  delete $("chart").dataset.source;
  clearFigures();
  state.run = null;
}

// clearFigures takes a run's figures off the drawing.
export function clearFigures() {
  state.runShown = false;
  for (const g of document.querySelectorAll("#graph g.node[data-busy], #graph g.chain[data-busy]")) {
    delete g.dataset.busy; delete g.dataset.rate; delete g.dataset.figure;
    g.querySelector(".box").style.fill = "";
    const f = g.querySelector(".figure");
    if (f) f.textContent = "";
    const t = g.querySelector(".busytrack");
    if (t) t.style.display = "none";
    const b = g.querySelector(".busybar");
    if (b) b.setAttribute("width", 0);
  }
  unmarkHot();
  for (const g of document.querySelectorAll("#graph g.edge[data-fill]")) {
    delete g.dataset.fill;
    g.querySelector(".filltrack").style.display = "none";
    g.querySelector(".fillbar").setAttribute("width", 0);
  }
}

// iterations is the graph iterations a snapshot has done: the least of
// firings ÷ repetitions over the actors the analysis counts.
function iterations(run) {
  const q = (state.report && state.report.repetitions) || {};
  let it = Infinity;
  for (const a of run.actors) if (q[a.name] > 0) it = Math.min(it, a.firings / q[a.name]);
  return it === Infinity ? 0 : it;
}

// showFigures puts a snapshot (GET /api/run or an event) on the drawing
// when it is of the graph drawn, and on the chart.
export function showFigures(run) {
  state.run = run;
  const mine = belongs(run);
  if (!mine) {
    if (state.runShown) clearFigures();
    prev = run;
    return;
  }
  state.runShown = true;
  keepChains(run);
  const dt = prev ? (run.elapsed_ns - prev.elapsed_ns) / 1e9 : 0;
  const before = prev ? new Map(prev.actors.map((a) => [a.name, a.firings])) : null;
  const done = run.actors.length > 0 && run.actors.every((a) => a.done);
  let hot = null, hotShare = 0;
  const chains = new Map(), ix = drawnIndex();
  for (const a of run.actors) {
    const perS = dt > 0 && !done ? (a.firings - (before.get(a.name) || 0)) / dt : a.firings / Math.max(1e-9, run.elapsed_ns / 1e9);
    const share = Math.min(1, a.busy_ns / Math.max(1, run.elapsed_ns * (a.replicas || 1)));
    if (share > hotShare) { hot = a.name; hotShare = share; }
    const g = ix.nodes.get(a.name);
    if (g) paintBox(g, perS, share);
    // A folded chain shows its first actor's firings/s and its busiest
    // actor's share.
    const c = ix.chains.get(a.name);
    if (c) { const f = chains.get(c); if (!f) chains.set(c, { perS, share }); else f.share = Math.max(f.share, share); }
  }
  for (const [g, f] of chains) paintBox(g, f.perS, f.share);
  markHot(hot, hotShare);
  for (const c of run.channels || []) paintChannel(c);
  if (run.elapsed_ns > 0) plot(run, dt, done);
  prev = run;
}

// keepChains keeps the fused chains a run reports (once it ended, each
// actor names the chain it ran in), with the id of the graph it ran.
function keepChains(run) {
  const map = new Map();
  for (const a of run.actors) if (a.fused) (map.get(a.fused) || map.set(a.fused, []).get(a.fused)).push(a.name);
  for (const [k, v] of map) if (v.length < 2) map.delete(k);
  if (map.size) state.chains = { id: run.graph_id, map };
}

// index maps actor and channel names to their drawn groups, and the
// actors of folded fused chains to their chain's box; it is rebuilt when
// the drawing is (state.drawn counts the drawings).
let index = { drawn: -1, nodes: new Map(), edges: new Map(), chains: new Map() };
function drawnIndex() {
  if (index.drawn === state.drawn) return index;
  index = { drawn: state.drawn, nodes: new Map(), edges: new Map(), chains: new Map() };
  for (const g of document.querySelectorAll("#graph g.node")) index.nodes.set(g.dataset.actor, g);
  for (const g of document.querySelectorAll("#graph g.chain")) for (const m of g.dataset.members.split(" ")) index.chains.set(m, g);
  for (const g of document.querySelectorAll("#graph .edge")) index.edges.set(g.dataset.channel, g);
  return index;
}

// heat is the body's colour for a busy share: white to orange.
function heat(share) {
  const a = 0.05 + 0.3 * share, mix = (c) => Math.round(255 + (c - 255) * a);
  return "rgb(" + mix(232) + ", " + mix(89) + ", " + mix(12) + ")"; // as style.fill reads back
}

// paintBox writes an actor's (or a folded chain's) firings/s and busy
// share on its box (kept in its data for a box whose text comes later)
// and heats the box.
function paintBox(g, perS, share) {
  const fig = compact(perS) + " · " + Math.round(share * 100) + " %";
  g.dataset.rate = perS.toFixed(1);
  g.dataset.busy = share.toFixed(3);
  g.dataset.figure = fig;
  const fill = heat(Math.round(share * 50) / 50), box = g.firstChild; // the box is the group's first element
  if (box.style.fill !== fill) box.style.fill = fill;
  const text = g.lastChild.classList.contains("detail") && g.lastChild.querySelector(".figure");
  if (!text) return;
  text.textContent = fig;
  const track = g.querySelector(".busytrack");
  track.style.display = "";
  g.querySelector(".busybar").setAttribute("width", (track.getAttribute("width") * share).toFixed(1));
}

// compact writes firings/s in at most 6 characters and a unit.
function compact(v) {
  return v >= 1e6 ? (v / 1e6).toFixed(1) + "M/s" : v >= 1e3 ? (v / 1e3).toFixed(1) + "k/s" : v.toFixed(0) + "/s";
}

// setTag sets the line above an actor's box (kept in its data for a box
// whose text comes later).
function setTag(g, text) {
  g.dataset.tag = text;
  const t = g.querySelector(".tag");
  if (t) t.textContent = text;
}

function unmarkHot() {
  for (const g of document.querySelectorAll("#graph g.node.hot, #graph g.chain.hot")) {
    g.classList.remove("hot");
    setTag(g, g.dataset.baseTag || "");
  }
}

// markHot marks the actor busiest for its share of the run: the measured
// bottleneck.
function markHot(hot, share) {
  const g = hot && share > 0.05 && (drawnIndex().nodes.get(hot) || drawnIndex().chains.get(hot));
  if (g && g.classList.contains("hot")) {
    if (!g.classList.contains("blocked")) setTag(g, "⚑ bottleneck (measured): " + Math.round(share * 100) + " % busy");
    return;
  }
  unmarkHot();
  if (!g) return;
  g.classList.add("hot");
  if (!g.classList.contains("blocked")) setTag(g, "⚑ bottleneck (measured): " + Math.round(share * 100) + " % busy");
}

// paintChannel draws a channel's fill as a bar under its label.
function paintChannel(c) {
  const g = drawnIndex().edges.get(c.name);
  if (!g || !(c.capacity > 0) || c.fill < 0) return;
  const track = g.querySelector(".filltrack");
  if (!track) return; // a big graph's channels have no label
  track.style.display = "";
  const share = Math.min(1, c.fill / c.capacity);
  const bar = g.querySelector(".fillbar");
  bar.setAttribute("width", (track.getAttribute("width") * share).toFixed(1));
  bar.style.fill = share > 0.9 ? "#d0312d" : share > 0.6 ? "#f08c00" : "#2f9e44";
  g.dataset.fill = c.fill;
}

// plot adds the graph's iterations/s to the chart: over the last interval
// while it runs, the mean for a run that ended with one snapshot.
function plot(run, dt, done) {
  const it = iterations(run);
  const t = run.elapsed_ns / 1e9;
  let v;
  if (dt > 0) v = (it - iterations(prev)) / dt;
  else v = it / t;
  if (done && series[0].length > 0 && dt <= 0) return;
  if (series[0].length === 0 && dt <= 0) { series[0].push(0); series[1].push(v); }
  series[0].push(t); series[1].push(v);
  draw();
}

// chartSize is the chart's plot size that, with its legend, fills its tab.
function chartSize() {
  const tab = $("tab-chart");
  const legend = chart ? chart.root.querySelector(".u-legend") : null;
  const lh = legend ? legend.getBoundingClientRect().height : 26;
  return { width: Math.max(200, tab.clientWidth - 12), height: Math.max(80, tab.clientHeight - lh - 10) };
}

// since writes a time axis tick v (seconds) in the unit the axis' span
// calls for: ms for a run shorter than two seconds (a tick of 0.0004 s
// would read 0 in seconds), seconds above.
function since(v, span) {
  if (v == null) return "";
  if (!(span >= 2)) {
    const ms = v * 1e3;
    return (span < 0.02 ? ms.toFixed(2) : span < 0.2 ? ms.toFixed(1) : ms.toFixed(0)) + " ms";
  }
  return (span < 20 ? v.toFixed(1) : v.toFixed(0)) + " s";
}

// draw makes the chart (empty before the first point) or sets its data,
// sized to its tab.
function draw() {
  const box = $("chart");
  box.dataset.points = series[0].length;
  if (!chart) {
    chart = new uPlot(Object.assign(chartSize(), {
      scales: { x: { time: false } },
      axes: [{ label: "time since the start", size: 36, labelSize: 16, values: (u, vs) => vs.map((v) => since(v, u.scales.x.max - u.scales.x.min)) }, { label: "iterations/s", size: 70, values: (u, vs) => vs.map((v) => (v ? rate(v).trim() : "0")) }],
      series: [{ label: "t (s)", value: (u, v) => (v == null ? "–" : v.toFixed(3)) },
        { label: "graph iterations/s", stroke: "#1769d1", width: 2, fill: "#1769d11a", value: (u, v) => (v == null ? "–" : rate(v).trim()) }],
      legend: { show: true },
    }), series, box);
    fitChart();
  } else {
    chart.setData(series);
  }
}

// fitChart sizes the chart to its tab (the dock's size or the window's
// changed, the tab showed).
export function fitChart() {
  if (!chart || !$("tab-chart").clientHeight) return;
  const s = chartSize();
  if (s.width !== chart.width || s.height !== chart.height) chart.setSize(s);
}

// throughputFromTrace replaces the chart's points by the graph's
// iterations/s over the whole run, from its trace: a sink's firings per
// bucket ÷ its repetitions.
export async function throughputFromTrace() {
  const sink = sinkOf();
  if (!sink || !belongs(state.run)) return;
  const r = await api("GET", "/api/run/trace?counts=40");
  if (r.status !== 200 || !r.data.counts[sink.name]) return;
  const { t0, t1, counts } = r.data;
  const dt = (t1 - t0) / 40 / 1e6, q = state.report.repetitions[sink.name];
  series[0].length = 0; series[1].length = 0;
  counts[sink.name].forEach((n, k) => { series[0].push((k + 0.5) * dt); series[1].push(n / q / dt); });
  $("chart").dataset.source = "trace:" + sink.name;
  draw();
}

// sinkOf is an actor without outputs that runs on the CPU (one trace slice
// per firing) and that the analysis counts.
function sinkOf() {
  const q = (state.report && state.report.repetitions) || {};
  const ok = (a) => q[a.name] > 0 && a.kind !== "kernel";
  const as = (state.graph && state.graph.actors) || [];
  return as.find((a) => ok(a) && a.outputs.length === 0) || [...as].reverse().find(ok);
}

// redraw shows the chart in its tab (empty until the first point), sized
// to it.
export function redraw() { draw(); fitChart(); }

// watchChart keeps the chart fitted to its tab as the dock or the window
// changes size.
export function watchChart() {
  new ResizeObserver(() => fitChart()).observe($("tab-chart"));
}
