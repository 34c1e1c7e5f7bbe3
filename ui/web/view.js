// The view of the drawing: pan (drag), zoom (wheel, buttons, keys), fit to
// the window, zoom to the selection, and a minimap when the drawing does
// not fit.
import { $, el } from "./common.js";

// view is the transform of the viewport group (screen = k·drawing + x,y)
// and the drawing's bounds and boxes.
// touched says the user moved the view since the graph opened.
export const view = { k: 1, x: 0, y: 0, bounds: { w: 1, h: 1, boxes: [] }, dragged: false, touched: false };

// MIN_LEGIBLE is the least zoom at which 12 px labels stay at least 11 px.
const MIN_LEGIBLE = 11 / 12;

function size() {
  const r = $("graph").getBoundingClientRect();
  return { w: Math.max(1, r.width), h: Math.max(1, r.height) };
}

// apply writes the transform and updates the zoom level and minimap.
export function apply() {
  $("viewport").setAttribute("transform", "translate(" + view.x.toFixed(1) + "," + view.y.toFixed(1) + ") scale(" + view.k.toFixed(4) + ")");
  $("zoomlevel").textContent = Math.round(view.k * 100) + " %";
  minimap();
}

// fitScale is the zoom that shows the whole drawing.
function fitScale() {
  const s = size(), b = view.bounds;
  return Math.min(s.w / (b.w + 16), s.h / (b.h + 16));
}

// show frames the box (drawing units) at zoom k, centred.
function frame(x, y, w, h, k) {
  const s = size();
  view.k = k;
  view.x = s.w / 2 - k * (x + w / 2);
  view.y = s.h / 2 - k * (y + h / 2);
  apply();
}

// fit shows the whole drawing.
export function fit() {
  const b = view.bounds;
  frame(0, 0, b.w, b.h, Math.min(1.5, fitScale()));
}

// initial is the view a graph opens with: fitted, but for graphs of up to
// 64 actors never below the legible zoom (then it opens at its left end,
// and the minimap shows the rest).
export function initial(actors) {
  view.touched = false;
  const k = fitScale();
  if (actors > 64 || k >= MIN_LEGIBLE) return fit();
  const b = view.bounds, s = size();
  view.k = MIN_LEGIBLE;
  view.x = 10;
  view.y = Math.max(10, s.h / 2 - (MIN_LEGIBLE * b.h) / 2);
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

// zoomAt multiplies the zoom by f around the screen point (px, py).
export function zoomAt(f, px, py) {
  view.touched = true;
  const k = Math.min(4, Math.max(0.05, view.k * f));
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
  frame(x0, y0, x1 - x0, y1 - y0, Math.min(1.6, s.w / (x1 - x0 + 120), s.h / (y1 - y0 + 120)));
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
  $("fit").addEventListener("click", fit);
  $("zoomsel").addEventListener("click", () => zoomTo(selectionPaths()));
  window.addEventListener("resize", refit);
}
