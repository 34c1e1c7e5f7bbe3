package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chartInDock says whether the throughput chart (its plot, axes and
// legend) lies inside the run panel: "in", "none" without a chart, or the
// two boxes.
const chartInDock = `(() => { const c = document.querySelector("#chart .uplot"), d = document.getElementById("dock").getBoundingClientRect();
	if (!c) return "none";
	const r = c.getBoundingClientRect();
	return r.width > 100 && r.height > 60 && r.left >= d.left - 1 && r.right <= d.right + 1 && r.top >= d.top - 1 && r.bottom <= d.bottom + 1 ?
		"in" : JSON.stringify([r, d]) })()`

// runFigures counts what a run put on the drawing: figures written on
// boxes, heated boxes, the measured bottleneck and fused chains.
const runFigures = `[...document.querySelectorAll("#graph g.node .figure")].filter((t) => t.textContent).length +
	document.querySelectorAll("#graph g.node[data-busy], #graph g.node.hot, #graph g.fused").length`

// setYAML puts text in the YAML text area as typing does.
func setYAML(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	eval[bool](t, ctx, `(() => { const t = document.getElementById("yaml"); t.value = `+jsString(text)+`;
		t.dispatchEvent(new Event("input")); return true })()`)
}

// otherGraph has actors named as cd2dat's first four.
const otherGraph = `kind: graph
name: other
actors:
  A: {out: {o: {type: f32, rate: 1}}, cost: 1us}
  B: {in: {i: {type: f32, rate: 1}}, out: {o: {type: f32, rate: 1}}, cost: 1us}
  C: {in: {i: {type: f32, rate: 1}}, out: {o: {type: f32, rate: 1}}, cost: 1us}
  D: {in: {i: {type: f32, rate: 1}}, cost: 1us}
channels:
  - {from: A.o, to: B.i}
  - {from: B.o, to: C.i}
  - {from: C.o, to: D.i}
`

// TestRunStateInBrowser: with the YAML panel hidden, a run of cd2dat, then
// its text edited into another graph, an invalid one and YAML that does not
// parse, then back, then a second run. The chart stays inside its panel
// before, during and after a run and starts empty on a new one; the run's
// figures leave the drawing as soon as it shows another graph (actors of
// the same names included) and come back with the graph that ran; the
// errors of the text are findings shown beside the drawing; the page
// reports no console errors (no 422 answers, the event stream closed
// cleanly).
func TestRunStateInBrowser(t *testing.T) {
	ctx := browser(t)
	errs := consoleErrors(t, ctx)
	// 300 iterations of cd2dat are 183,600 firings: the trace keeps the
	// first 150,000 and the page says so.
	openGraph(t, ctx, &Server{File: tempExample(t), TraceLimit: 150_000}, "F")
	if count(t, ctx, "#editor-pane.collapsed") != 1 {
		t.Fatal("expected the YAML panel hidden at first")
	}
	original := yamlText(t, ctx)
	steps(t, ctx, chromedp.SetValue(chromedp.CSS("#iterations"), "300"))
	// Before: the chart comes with the panel, empty, inside it.
	at := eval[[]string](t, ctx, `(() => { document.getElementById("run").click();
		return [document.getElementById("chart").dataset.points || "", `+chartInDock+`] })()`)
	if at[0] != "0" || at[1] != "in" {
		t.Fatalf("run started: expected an empty chart inside the run panel, found %v", at)
	}
	eventually(t, "figures on F", func() bool {
		return strings.Contains(text(t, ctx, `#graph g.node[data-actor="F"] .figure`), "/s · ")
	})
	if got := eval[string](t, ctx, chartInDock); got != "in" {
		t.Fatalf("during the run: expected the chart inside the run panel, found %s", got)
	}
	eventually(t, "the run to end", func() bool { return text(t, ctx, "#runstate") == "done" })
	waitChainsFolded(t, ctx)
	eventually(t, "the throughput from the trace", func() bool {
		return eval[string](t, ctx, `document.getElementById("chart").dataset.source || ""`) == "trace:F"
	})
	if got := eval[string](t, ctx, chartInDock); got != "in" {
		t.Fatalf("after the run: expected the chart inside the run panel, found %s", got)
	}
	eventually(t, "the fused chains or the bottleneck", func() bool { return count(t, ctx, "#graph g.node.hot") == 1 })
	if dl := text(t, ctx, "#tracedl"); dl != "Download trace (first 150,000 events)" {
		t.Fatalf("a trace that reached its limit: expected the download to say it holds the first 150,000 events, found %q", dl)
	}
	eventually(t, "the timeline's note", func() bool {
		return strings.HasPrefix(eval[string](t, ctx, `document.getElementById("timeline").dataset.note || ""`), "the run's first 150,000 events (")
	})
	shot(t, ctx, "run")

	// Another graph, whose actors A–D have cd2dat's names: no figures.
	setYAML(t, ctx, otherGraph)
	// (cd2dat's run folded its fused chain A..B: the drawing that ran has
	// four actor boxes too.)
	eventually(t, "the other graph drawn", func() bool {
		return count(t, ctx, "#graph g.node") == 4 && count(t, ctx, `#graph g.node[data-actor="A"]`) == 1
	})
	if n := eval[int](t, ctx, runFigures); n != 0 {
		t.Fatalf("another graph: expected none of the run's figures on it, found %d", n)
	}
	if note := text(t, ctx, "#runnote"); !strings.Contains(note, "figures hidden") {
		t.Fatalf("another graph: expected a note that the figures are hidden, found %q", note)
	}
	shot(t, ctx, "run-other-graph")

	// An invalid graph: its sketch drawn, no figures, the error a finding
	// shown with the YAML panel hidden.
	setYAML(t, ctx, strings.Replace(otherGraph, "to: D.i", "to: Nope.i", 1))
	eventually(t, "the verdict invalid", func() bool { return text(t, ctx, "#verdict") == "invalid" })
	if n := eval[int](t, ctx, runFigures); n != 0 {
		t.Fatalf("an invalid graph: expected none of the run's figures, found %d", n)
	}
	shown := eval[string](t, ctx, `[...document.querySelectorAll("#findings li.bad")].filter((l) => l.checkVisibility()).map((l) => l.textContent).join("|")`)
	if !strings.Contains(shown, "Nope") || count(t, ctx, "#editor-pane.collapsed") != 1 {
		t.Fatalf("an invalid graph, the YAML hidden: expected its error among the findings shown, found %q", shown)
	}
	// YAML that does not parse: the error, with file:line:col, a finding.
	setYAML(t, ctx, original+"\n  - {from: [\n")
	eventually(t, "the verdict error", func() bool { return text(t, ctx, "#verdict") == "error" })
	shown = eval[string](t, ctx, `[...document.querySelectorAll("#findings li.bad")].filter((l) => l.checkVisibility()).map((l) => l.textContent).join("|")`)
	if !strings.Contains(shown, "cd2dat.yaml:") || eval[int](t, ctx, runFigures) != 0 {
		t.Fatalf("YAML that does not parse: expected its error at cd2dat.yaml:line:col among the findings and no figures, found %q", shown)
	}
	shot(t, ctx, "findings-error")

	// Back to the graph that ran: its figures come back.
	setYAML(t, ctx, original)
	eventually(t, "the figures back on F", func() bool {
		return strings.Contains(text(t, ctx, `#graph g.node[data-actor="F"] .figure`), "/s · ") && text(t, ctx, "#runnote") == ""
	})

	// A second run starts with an empty chart, its own axes.
	at = eval[[]string](t, ctx, `(() => { document.getElementById("run").click();
		return [document.getElementById("chart").dataset.points || "", document.getElementById("chart").dataset.source || "", `+chartInDock+`] })()`)
	if at[0] != "0" || at[1] != "" || at[2] != "in" {
		t.Fatalf("second run: expected the chart emptied (no points, no trace), inside its panel, found %v", at)
	}
	eventually(t, "the second run to end", func() bool { return text(t, ctx, "#runstate") == "done" })
	time.Sleep(300 * time.Millisecond) // the compare and trace requests
	noConsoleErrors(t, errs)
}

// TestStopInBrowser: Stop says so at once and is disabled, the server's
// answer and the run's end confirm it; no console errors.
func TestStopInBrowser(t *testing.T) {
	ctx := browser(t)
	errs := consoleErrors(t, ctx)
	openGraph(t, ctx, &Server{File: tempExample(t)}, "F")
	if !eval[bool](t, ctx, `document.getElementById("stop").disabled`) {
		t.Fatal("no run: expected Stop disabled")
	}
	steps(t, ctx, chromedp.SetValue(chromedp.CSS("#iterations"), "1000000"), chromedp.Click(chromedp.CSS("#run")))
	eventually(t, "the run going", func() bool {
		return text(t, ctx, "#runstate") == "running" && strings.Contains(text(t, ctx, `#graph g.node[data-actor="F"] .figure`), "/s")
	})
	got := eval[[]any](t, ctx, `(() => { const s = document.getElementById("stop"); s.click();
		return [document.getElementById("runstate").textContent, s.disabled, document.getElementById("run").disabled] })()`)
	if got[0] != "stopping…" || got[1] != true || got[2] != true {
		t.Fatalf("Stop clicked: expected at once \"stopping…\" with Stop and Run disabled, found %v", got)
	}
	// The run ends once its workers saw the cancellation: on a loaded
	// machine that takes a while.
	for end := time.Now().Add(40 * time.Second); !strings.HasPrefix(text(t, ctx, "#runstate"), "stopped after "); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("expected \"stopped after …\" within 40 s, found %q", text(t, ctx, "#runstate"))
		}
	}
	eventually(t, "the stopped run's trace", func() bool {
		return eval[bool](t, ctx, `getComputedStyle(document.getElementById("tracedl")).display !== "none"`)
	})
	if eval[bool](t, ctx, `document.getElementById("run").disabled || !document.getElementById("stop").disabled`) {
		t.Fatal("stopped: expected Run enabled and Stop disabled")
	}
	time.Sleep(300 * time.Millisecond)
	noConsoleErrors(t, errs)
}
