// quickLayout lays a big graph out in layers in a few milliseconds, where
// dagre takes seconds: each actor in the layer of its longest path from a
// source (feedback channels, found by a depth-first search, left out),
// the actors of a layer ordered by a few barycenter sweeps, channels as
// curves between their ports. It fills the same fields dagre does.
export function quickLayout(lay, opts) {
  const names = lay.nodes();
  const succ = new Map(names.map((v) => [v, []])), pred = new Map(names.map((v) => [v, []]));
  for (const e of forwardEdges(lay, names)) { succ.get(e.v).push(e.w); pred.get(e.w).push(e.v); }
  const layers = layersOf(names, succ, pred);
  order(layers, succ, pred);
  place(lay, layers, opts);
  for (const e of lay.edges()) {
    const a = lay.node(e.v), b = lay.node(e.w), d = lay.edge(e);
    const s = { x: a.x + a.width / 2, y: a.y }, t = { x: b.x - b.width / 2, y: b.y };
    const dx = Math.max(20, (t.x - s.x) / 3);
    d.points = [s, { x: s.x + dx, y: s.y }, { x: t.x - dx, y: t.y }, t];
    d.x = (s.x + t.x) / 2; d.y = (s.y + t.y) / 2;
  }
}

// forwardEdges are the edges less those that close a cycle in a
// depth-first search from the actors in declared order.
function forwardEdges(lay, names) {
  const out = new Map(names.map((v) => [v, []]));
  for (const e of lay.edges()) out.get(e.v).push(e);
  const state = new Map(), keep = [];
  const visit = (v) => {
    state.set(v, 1);
    for (const e of out.get(v)) {
      if (state.get(e.w) === 1) continue; // a feedback edge
      keep.push(e);
      if (!state.has(e.w)) visit(e.w);
    }
    state.set(v, 2);
  };
  for (const v of names) if (!state.has(v)) visit(v);
  return keep;
}

// layersOf puts each actor in the layer of its longest path from a source.
function layersOf(names, succ, pred) {
  const rank = new Map(), indeg = new Map(names.map((v) => [v, pred.get(v).length]));
  const queue = names.filter((v) => indeg.get(v) === 0);
  for (const v of queue) rank.set(v, 0);
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i];
    for (const w of succ.get(v)) {
      rank.set(w, Math.max(rank.get(w) || 0, rank.get(v) + 1));
      indeg.set(w, indeg.get(w) - 1);
      if (indeg.get(w) === 0) queue.push(w);
    }
  }
  const layers = [];
  for (const v of names) (layers[rank.get(v) || 0] ||= []).push(v);
  return layers.filter((l) => l);
}

// order sorts each layer by the mean position of its neighbours, sweeping
// down and up a few times.
function order(layers, succ, pred) {
  const pos = new Map();
  const index = () => layers.forEach((l) => l.forEach((v, i) => pos.set(v, i)));
  index();
  const sweep = (ls, nb) => {
    for (const l of ls) {
      const bc = new Map(l.map((v, i) => { const n = nb.get(v); return [v, n.length ? n.reduce((s, u) => s + pos.get(u), 0) / n.length : i]; }));
      l.sort((a, b) => bc.get(a) - bc.get(b));
      l.forEach((v, i) => pos.set(v, i));
    }
  };
  for (let k = 0; k < 4; k++) { sweep(layers.slice(1), pred); sweep(layers.slice(0, -1).reverse(), succ); }
}

// place gives each actor its centre: layers left to right, each layer's
// actors stacked and centred on the tallest layer.
function place(lay, layers, opts) {
  const heights = layers.map((l) => l.reduce((h, v) => h + lay.node(v).height, 0) + opts.nodesep * (l.length - 1));
  const H = Math.max(...heights);
  let x = opts.marginx;
  layers.forEach((l, r) => {
    const w = Math.max(...l.map((v) => lay.node(v).width));
    let y = opts.marginy + (H - heights[r]) / 2;
    for (const v of l) {
      const d = lay.node(v);
      d.x = x + w / 2; d.y = y + d.height / 2;
      y += d.height + opts.nodesep;
    }
    x += w + opts.ranksep;
  });
  Object.assign(lay.graph(), { width: x - opts.ranksep + opts.marginx, height: H + 2 * opts.marginy });
}

// QuickGraph is the graph a big drawing is laid out in by quickLayout:
// what it and the drawing ask of dagre's graph (nodes with their labels,
// edges named, the graph's label), without graphlib's bookkeeping, which
// took a big graph's opening drawing (its code not compiled yet) tens of
// ms. An edge's name is its key (the channels' names are unique).
export class QuickGraph {
  constructor() { this.label = {}; this.byNode = new Map(); this.list = []; this.byName = new Map(); }
  setGraph(label) { this.label = label; }
  graph() { return this.label; }
  setDefaultEdgeLabel() {}
  setNode(v, label) { this.byNode.set(v, label); }
  node(v) { return this.byNode.get(v); }
  nodes() { return [...this.byNode.keys()]; }
  parent() { return undefined; }
  setEdge(v, w, label, name) {
    if (!this.byName.has(name)) this.list.push({ v, w, name });
    this.byName.set(name, label);
  }
  edge(e) { return this.byName.get(e.name); }
  edges() { return this.list; }
}
