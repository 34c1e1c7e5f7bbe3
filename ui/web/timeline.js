// The timeline: the last run's trace as a lane per worker or device (and
// per direction of a device's link, tinted blue), zoomed by the wheel, the actor named on hover. The server aggregates the
// firings into one bucket per pixel column and lane (GET
// /api/run/trace?from=&to=&px=), so the page never holds the events.
import { api, $, html } from "./common.js";

const timeline = { t0: 0, t1: 1, from: 0, to: 1, data: null, fetching: null, note: "" };
const LEFT = 130, LANE = 26, TOP = 22;

function timelineWidth() {
  return Math.max(10, $("timeline").width - LEFT - 10);
}

// startTimeline fetches the whole run's buckets and shows the timeline;
// note, when not empty, is said in its header (the trace kept only the
// run's first events).
export async function startTimeline(note = "") {
  timeline.note = note;
  const c = $("timeline");
  c.dataset.note = note;
  c.width = Math.max(600, ($("dock").clientWidth || 900) - 4);
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
  c.height = TOP + 10 + LANE * d.rows.length;
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
export function colour(i) {
  return "hsl(" + Math.round((i * 137.508) % 360) + ",60%,55%)";
}

// xOf is the canvas x of time t (µs) in the current window.
function xOf(t) {
  return LEFT + ((t - timeline.from) / (timeline.to - timeline.from)) * timelineWidth();
}

// drawTimeline paints the buckets held, stretched to the current window
// (they are the exact ones once the window's answer comes).
function drawTimeline() {
  const d = timeline.data;
  if (!d) return;
  const c = $("timeline"), ctx = c.getContext("2d");
  const w = timelineWidth();
  ctx.clearRect(0, 0, c.width, c.height);
  ctx.font = "12px system-ui, sans-serif";
  const bw = (d.to - d.from) / d.px;
  d.rows.forEach((r, i) => {
    const y = TOP + LANE * i;
    ctx.fillStyle = r.copies ? (i % 2 ? "#eaf1fb" : "#f1f6fd") : i % 2 ? "#f7f8fa" : "#fff";
    ctx.fillRect(0, y, c.width, LANE);
    ctx.fillStyle = "#3b4656";
    ctx.fillText(r.name, 6, y + 17);
    for (let k = 0; k < r.busy.length; k++) {
      if (!(r.busy[k] > 0)) continue;
      const x0 = Math.max(LEFT, xOf(d.from + k * bw)), x1 = Math.min(LEFT + w, xOf(d.from + (k + 1) * bw));
      if (x1 < LEFT || x0 > LEFT + w) continue;
      ctx.fillStyle = r.actor[k] >= 0 ? colour(r.actor[k]) : "#999";
      const h = Math.max(2, (LANE - 6) * r.busy[k]);
      ctx.fillRect(x0, y + LANE - 3 - h, Math.max(1, x1 - x0), h);
    }
  });
  ctx.fillStyle = "#667385";
  ctx.fillText(timeline.from.toFixed(1) + " µs", LEFT, 14);
  ctx.fillText(timeline.to.toFixed(1) + " µs", LEFT + w - 90, 14);
  ctx.fillText(d.firings + " firings in view · wheel to zoom" + (timeline.note ? " · " + timeline.note : ""), LEFT + w / 2 - 90, 14);
  keys(d);
}

function keys(d) {
  const box = $("tlkeys");
  box.replaceChildren();
  for (const [i, a] of d.actors.entries()) {
    const s = html("span", "key");
    const sw = html("span", "sw");
    sw.style.background = colour(i);
    s.append(sw, a);
    box.appendChild(s);
  }
}

// hover names the actor under the pointer.
function hover(e) {
  const d = timeline.data, tip = $("tltip");
  const row = d && d.rows[Math.floor((e.offsetY - TOP) / LANE)];
  const w = timelineWidth();
  const t = timeline.from + ((e.offsetX - LEFT) / w) * (timeline.to - timeline.from);
  const k = d ? Math.floor((t - d.from) / ((d.to - d.from) / d.px)) : -1;
  if (!row || e.offsetX < LEFT || k < 0 || k >= row.actor.length || row.actor[k] < 0) { tip.style.display = "none"; return; }
  tip.textContent = (row.copies ? "copies for " : "") + d.actors[row.actor[k]] + " on " + row.name + " · " + t.toFixed(1) + " µs · " + Math.round(100 * row.busy[k]) + " % busy";
  tip.style.left = e.offsetX + 14 + "px";
  tip.style.top = e.offsetY + 10 + "px";
  tip.style.display = "block";
}

// wireTimeline: the wheel zooms around the pointer, the pointer names.
export function wireTimeline() {
  const c = $("timeline");
  c.addEventListener("wheel", (e) => {
    e.preventDefault();
    const f = Math.min(1, Math.max(0, (e.offsetX - LEFT) / timelineWidth()));
    const { from, to } = timeline;
    const at = from + f * (to - from);
    const k = e.deltaY < 0 ? 0.8 : 1.25;
    timeline.from = Math.max(timeline.t0, at - (at - from) * k);
    timeline.to = Math.min(timeline.t1, at + (to - at) * k);
    if (!(timeline.to > timeline.from)) { timeline.from = from; timeline.to = to; }
    drawTimeline();
    fetchWindow();
  });
  c.addEventListener("mousemove", hover);
  c.addEventListener("mouseleave", () => { $("tltip").style.display = "none"; });
}
