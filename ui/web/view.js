// The view of the drawing: pan (drag), zoom (wheel, buttons, keys), fit to
// the window, zoom to the selection, a minimap when the drawing does not
// fit, and levels of detail: every label on screen stays 11 px or more.
//
//   detail    (zoom ≥ 11/12): everything, 12 px labels at 11 px or more;
//   names     (zoom ≥ 11/14): the actors' names (14 px) and the boxes;
//   overview  (below):        the boxes without text, and the groups of
//                             layers with their labels at 13 px on screen.
//
// The zoom goes no further out than the whole drawing (or the legible zoom
// when the drawing is smaller).
import { $, el } from "./common.js";

// view is the transform of the viewport group (screen = k·drawing + x,y),
// the drawing's bounds, boxes and groups, and the level of detail.
// touched says the user moved the view since the graph opened; onChange
// runs after each change of the view (the drawing adds the text of the
// boxes that came into view).
export const view = { k: 1, x: 0, y: 0, bounds: { w: 1, h: 1, boxes: [], groups: [], room: 0 }, dragged: false, touched: false, lod: "", onChange: null };

// DETAIL is the least zoom at which 12 px labels stay at least 11 px;
// NAMES the least at which 14 px names do.
export const DETAIL = 11 / 12, NAMES = 11 / 14;
// GROUP_PX is the size of the groups' labels on screen.
const GROUP_PX = 13;
// TOP is the room the zoom bar takes at the top of the pane.
const TOP = 46;

// size is the pane's size, measured once and then kept by a
// ResizeObserver (see wire): measuring it while a drawing was just made
// would make the browser lay the drawing out at once.
let paneSize = null;
function size() {
  if (!paneSize) {
    const r = $("graph").getBoundingClientRect();
    paneSize = { w: Math.max(1, r.width), h: Math.max(1, r.height) };
  }
  return paneSize;
}

// levelOf is the level of detail at zoom k.
export function levelOf(k) {
  return k >= DETAIL - 1e-6 ? "detail" : k >= NAMES - 1e-6 ? "names" : "overview";
}

// apply writes the transform, the level of detail, the groups' label size,
// and updates the zoom level and minimap.
export function apply() {
  const g = $("graph");
  $("viewport").setAttribute("transform", "translate(" + view.x.toFixed(1) + "," + view.y.toFixed(1) + ") scale(" + view.k.toFixed(4) + ")");
  const lod = levelOf(view.k);
  if (lod !== view.lod) {
    g.classList.remove("lod-" + view.lod);
    g.classList.add("lod-" + lod);
    g.dataset.lod = lod;
    view.lod = lod;
  }
  g.style.setProperty("--group-font", (GROUP_PX / view.k).toFixed(2) + "px");
  $("zoomlevel").textContent = Math.round(view.k * 100) + " %";
  minimap();
  if (view.onChange) view.onChange();
}

// visibleRect is the part of the drawing in the pane, in drawing units.
export function visibleRect() {
  const s = size();
  return { x0: -view.x / view.k, y0: -view.y / view.k, x1: (s.w - view.x) / view.k, y1: (s.h - view.y) / view.k };
}

// fitScale is the zoom that shows the whole drawing under the zoom bar.
function fitScale() {
  const s = size(), b = view.bounds;
  return Math.min(s.w / (b.w + 16), (s.h - TOP) / (b.h + 16));
}

// minZoom is the least zoom: the whole drawing, or the legible zoom for a
// drawing smaller than the pane.
export function minZoom() {
  return Math.min(DETAIL, 0.95 * fitScale());
}

// frame shows the box (drawing units) at zoom k, centred under the zoom bar.
function frame(x, y, w, h, k) {
  const s = size();
  view.k = k;
  view.x = s.w / 2 - k * (x + w / 2);
  view.y = TOP + (s.h - TOP) / 2 - k * (y + h / 2);
  apply();
}

// fit shows the whole drawing.
export function fit() {
  const b = view.bounds;
  frame(0, 0, b.w, b.h, Math.min(1.5, fitScale()));
}

// initial is the view a graph opens with: fitted, but for graphs of up to
// 64 actors never below the legible zoom (then it opens at its left end,
// and the minimap shows the rest). A bigger graph that does not fit at a
// legible zoom opens as the overview of its groups.
export function initial(actors) {
  view.touched = false;
  const k = fitScale();
  if (actors > 64 || k >= DETAIL) return fit();
  const b = view.bounds, s = size();
  view.k = DETAIL;
  view.x = 10;
  view.y = Math.max(TOP, TOP + (s.h - TOP) / 2 - (DETAIL * b.h) / 2);
  apply();
}

// setBounds records a new drawing; keep says to keep the current view
// (an edit), else it opens with the initial view.
export function setBounds(b, keep, actors) {
  view.bounds = b;
  if (keep) apply();
  else initial(actors);
}

// refit redoes the initial view after the pane changed size (the run
// panel or the YAML opened), unless the user moved the view.
export function refit() {
  if (view.touched) apply();
  else initial(view.bounds.boxes.length);
}

// zoomAt multiplies the zoom by f around the screen point (px, py), from
// the whole drawing (minZoom) to 4.
export function zoomAt(f, px, py) {
  view.touched = true;
  const k = Math.min(4, Math.max(minZoom(), view.k * f));
  view.x = px - (px - view.x) * (k / view.k);
  view.y = py - (py - view.y) * (k / view.k);
  view.k = k;
  apply();
}

// zoomTo frames the boxes of the given actor paths.
export function zoomTo(paths) {
  view.touched = true;
  const bs = view.bounds.boxes.filter((b) => paths.includes(b.path));
  if (!bs.length) return;
  const x0 = Math.min(...bs.map((b) => b.x)), y0 = Math.min(...bs.map((b) => b.y));
  const x1 = Math.max(...bs.map((b) => b.x + b.w)), y1 = Math.max(...bs.map((b) => b.y + b.h));
  const s = size();
  frame(x0, y0, x1 - x0, y1 - y0, Math.max(minZoom(), Math.min(1.6, s.w / (x1 - x0 + 120), (s.h - TOP) / (y1 - y0 + 120))));
}

// centreActor centres the actor at path at a zoom where its detail shows;
// false when it is not drawn.
export function centreActor(path) {
  const b = view.bounds.boxes.find((x) => x.path === path);
  if (!b) return false;
  view.touched = true;
  frame(b.x, b.y, b.w, b.h, Math.min(1.6, Math.max(view.k, 1)));
  return true;
}

// openGroup opens a group of the overview: the view zooms to its actors at
// the legible zoom (their text comes), starting at its top.
export function openGroup(id) {
  const g = view.bounds.groups.find((x) => x.id === id);
  if (!g) return;
  view.touched = true;
  const s = size(), k = Math.max(DETAIL, Math.min(1.2, s.w / (g.w + 40), (s.h - TOP) / (g.h + 40)));
  const h = Math.min(g.h, (s.h - TOP) / k);
  frame(g.x, g.y, g.w, h, k);
}

// minimap draws the boxes and the visible window when the drawing does
// not fit; a click centres the view there.
function minimap() {
  const m = $("minimap"), b = view.bounds, s = size();
  const fits = view.x >= -1 && view.y >= -1 && view.x + view.k * b.w <= s.w + 1 && view.y + view.k * b.h <= s.h + 1;
  m.style.display = fits ? "none" : "block";
  if (fits) return;
  m.setAttribute("viewBox", "-20 -20 " + (b.w + 40) + " " + (b.h + 40));
  m.setAttribute("preserveAspectRatio", "xMidYMid meet");
  if (m.dataset.drawn !== String(b.boxes.length) + ":" + b.w) {
    m.replaceChildren();
    for (const x of b.boxes) m.appendChild(el("rect", { class: "mm-node", x: x.x, y: x.y, width: x.w, height: x.h, rx: 4 }));
    m.appendChild(el("rect", { class: "mm-view" }));
    m.dataset.drawn = String(b.boxes.length) + ":" + b.w;
  }
  const v = m.querySelector(".mm-view");
  v.setAttribute("x", -view.x / view.k); v.setAttribute("y", -view.y / view.k);
  v.setAttribute("width", s.w / view.k); v.setAttribute("height", s.h / view.k);
}

// centreOn moves the view so that the drawing point (x, y) is centred.
function centreOn(x, y) {
  view.touched = true;
  const s = size();
  view.x = s.w / 2 - view.k * x;
  view.y = s.h / 2 - view.k * y;
  apply();
}

// wire connects the mouse, wheel, buttons and keys to the view.
export function wire(selectionPaths) {
  const svg = $("graph");
  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 || e.target.classList.contains("port")) return;
    drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
    view.dragged = false;
  });
  window.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { view.dragged = true; svg.classList.add("panning"); }
    if (view.dragged) { view.x = drag.vx + dx; view.y = drag.vy + dy; view.touched = true; apply(); }
  });
  window.addEventListener("pointerup", () => { drag = null; svg.classList.remove("panning"); });
  // A drag ends with a click: it must not select or deselect.
  svg.addEventListener("click", (e) => { if (view.dragged) { e.stopPropagation(); view.dragged = false; } }, true);
  $("minimap").addEventListener("click", (e) => {
    const m = $("minimap"), pt = m.createSVGPoint();
    pt.x = e.clientX; pt.y = e.clientY;
    const p = pt.matrixTransform(m.getScreenCTM().inverse());
    centreOn(p.x, p.y);
  });
  const centre = () => { const s = size(); return [s.w / 2, s.h / 2]; };
  $("zoomin").addEventListener("click", () => zoomAt(1.25, ...centre()));
  $("zoomout").addEventListener("click", () => zoomAt(0.8, ...centre()));
  $("fit").addEventListener("click", () => { view.touched = true; fit(); });
  $("zoomsel").addEventListener("click", () => zoomTo(selectionPaths()));
  // The pane changes size with the window, the run panel, the YAML
  // panel, the legend: the view follows.
  new ResizeObserver((es) => {
    const r = es[es.length - 1].contentRect, s = { w: Math.max(1, r.width), h: Math.max(1, r.height) };
    if (paneSize && s.w === paneSize.w && s.h === paneSize.h) return;
    paneSize = s;
    if (view.bounds.boxes.length) refit();
  }).observe($("canvas")); // the drawing's pane: the svg fills it
  size();
}
