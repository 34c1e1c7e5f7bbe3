// Shared by the page's modules: the page's state, DOM and API helpers.

export const token = new URLSearchParams(location.search).get("token");
export const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

// state is the page's state: the last graph answered, its report and
// mapping, the composites drawn expanded, the selection, a pending
// connection, and the last run's figures.
// run is the last run's snapshot (its graph_id says which graph it is of);
// runShown whether its figures are on the drawing (the graph drawn is the
// one it ran). chains are the fused chains a run reported, with the id of
// the graph it ran ({id, map: chain -> its actors}); openChains those
// opened on the drawing (the others are folded).
export const state = { graph: null, report: null, mapping: null, expanded: new Set(), selected: null, connectFrom: null, run: null, runShown: false,
  chains: null, openChains: new Set() };

// headers are the headers of every API call: the page's token, if any.
// (The one place where the page says who it is: api and events use it.)
function headers() {
  const h = {};
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

// api calls path on the server with the page's headers; every fetch of
// the page goes through it. The answer's JSON is data; at is when the
// answer came (performance.now()), before its body was read.
export async function api(method, path, body) {
  const r = await fetch(path, { method, headers: headers(), body });
  const at = performance.now();
  let data = null;
  try { data = await r.json(); } catch (e) { data = { errors: ["answer is not JSON"] }; }
  return { status: r.status, data, at };
}

// withToken adds the page's token to a URL the browser fetches by itself
// (a link, an EventSource: they cannot send headers).
export function withToken(path) {
  return token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path;
}

// events opens the server-sent events of path (the page's only
// EventSource goes through it).
export function events(path) {
  return new EventSource(withToken(path));
}

// el makes an SVG element with attributes and text.
export function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

// html makes an HTML element with a class and text.
export function html(name, cls, text) {
  const e = document.createElement(name);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// rate writes a figure per second with k / M.
export function rate(v) {
  if (!v) return "–";
  return v >= 1e6 ? (v / 1e6).toFixed(2) + " M" : v >= 1e3 ? (v / 1e3).toFixed(2) + " k" : v.toFixed(1) + " ";
}
