package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/sluicehq/sluice/actors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/performance"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// consoleErrors collects what the page reports as errors from now on:
// exceptions, console.error calls, error log entries and answers of 400
// or more. Call the returned function to read them.
func consoleErrors(t *testing.T, ctx context.Context) func() []string {
	t.Helper()
	if err := chromedp.Do(ctx); err != nil { // open the tab first
		t.Fatal(err)
	}
	var mu sync.Mutex
	var errs []string
	add := func(s string) { mu.Lock(); errs = append(errs, s); mu.Unlock() }
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			add("exception: " + e.ExceptionDetails.Text)
		case *cdpruntime.EventConsoleAPICalled:
			if e.Type == cdpruntime.ConsoleAPICalledTypeError {
				add("console.error")
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				add("log: " + e.Entry.Text + " " + e.Entry.URL)
			}
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				add(fmt.Sprintf("HTTP %d for %s", e.Response.Status, e.Response.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), errs...) }
}

// noConsoleErrors fails the test if the page reported errors.
func noConsoleErrors(t *testing.T, errs func() []string) {
	t.Helper()
	if e := errs(); len(e) > 0 {
		t.Fatalf("console: expected no errors, found %q", e)
	}
}

// openGraph serves file and opens the page, waiting for its first actor.
func openGraph(t *testing.T, ctx context.Context, srv *Server, first string) {
	t.Helper()
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	steps(t, ctx, chromedp.Navigate(ts.URL+"/?token="+srv.Token), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="`+first+`"]`)))
}

// labelSizes is the smallest rendered font size (px, the zoom applied) of
// the non-empty node and edge labels, and how many there are.
const labelSizes = `(() => { let min = 1e9, n = 0;
	for (const t of document.querySelectorAll("#graph g.node text, #graph g.edge text")) {
		if (!t.textContent.trim()) continue;
		min = Math.min(min, parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a); n++;
	}
	return [min, n] })()`

// TestLegibleInBrowser: at the zoom the page opens with, every node and
// channel label of cd2dat and of bench/scale's 64-actor DAG is drawn at
// 11 px or more; the wheel zooms (the viewport's transform changes), Fit
// shows the whole DAG; the page reports no errors.
func TestLegibleInBrowser(t *testing.T) {
	for _, c := range []struct{ file, first, shot string }{
		{"../examples/cd2dat.yaml", "F", ""}, {"testdata/dag64.yaml", "a000", "dag64"},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			ctx := browser(t)
			errs := consoleErrors(t, ctx)
			openGraph(t, ctx, &Server{File: c.file}, c.first)
			got := eval[[]float64](t, ctx, labelSizes)
			if got[1] < 10 || got[0] < 11 {
				t.Fatalf("expected every label at 11 px or more, found the smallest at %.2f px (of %.0f labels)", got[0], got[1])
			}
			if c.shot != "" {
				shot(t, ctx, c.shot)
			}
			before := eval[string](t, ctx, `document.getElementById("viewport").getAttribute("transform")`)
			eval[bool](t, ctx, `document.getElementById("graph").dispatchEvent(new WheelEvent("wheel", {deltaY: -300, clientX: 500, clientY: 400, bubbles: true, cancelable: true}))`)
			after := eval[string](t, ctx, `document.getElementById("viewport").getAttribute("transform")`)
			if after == before || !strings.Contains(after, "scale(") {
				t.Fatalf("wheel: expected the viewport's transform to change, found %q then %q", before, after)
			}
			steps(t, ctx, chromedp.Click(chromedp.CSS("#fit")))
			inView := eval[bool](t, ctx, `(() => { const r = document.getElementById("graph").getBoundingClientRect();
				return [...document.querySelectorAll("#graph g.node")].every((n) => { const b = n.getBoundingClientRect();
					return b.left >= r.left - 1 && b.right <= r.right + 1 && b.top >= r.top - 1 && b.bottom <= r.bottom + 1 }) })()`)
			if !inView {
				t.Fatal("Fit: expected every actor inside the drawing's pane")
			}
			noConsoleErrors(t, errs)
		})
	}
}

// TestFindingsPaintedInBrowser opens examples/feedback-deadlock.yaml: the
// actors check finds blocked carry the class blocked and a red outline,
// the feedback channel (loop) leaves accumulate's right border and enters
// predict's left border, and a finding clicked selects its actor on the
// drawing and its line in the YAML.
func TestFindingsPaintedInBrowser(t *testing.T) {
	ctx := browser(t)
	errs := consoleErrors(t, ctx)
	const file = "../examples/feedback-deadlock.yaml"
	openGraph(t, ctx, &Server{File: file}, "predict")
	for _, a := range []string{"predict", "adapt", "accumulate"} {
		sel := `#graph g.node.blocked[data-actor="` + a + `"]`
		if count(t, ctx, sel) != 1 {
			t.Fatalf("expected %s drawn blocked (class blocked)", a)
		}
		if s := eval[string](t, ctx, `getComputedStyle(document.querySelector('`+sel+` .box')).stroke`); s != "rgb(208, 49, 45)" {
			t.Fatalf("%s: expected a red outline, found stroke %s", a, s)
		}
	}
	if count(t, ctx, `#graph g.node.blocked[data-actor="src"]`) != 0 {
		t.Fatal("src fires: expected it not drawn blocked")
	}
	ends := eval[[]float64](t, ctx, `(() => {
		const p = document.querySelector('#graph g.edge[data-channel="loop"] path.line');
		const a = p.getPointAtLength(0), b = p.getPointAtLength(p.getTotalLength());
		const s = document.querySelector('#graph g.node[data-actor="accumulate"] .box').getBBox();
		const d = document.querySelector('#graph g.node[data-actor="predict"] .box').getBBox();
		return [a.x - (s.x + s.width), a.y - s.y, s.y + s.height - a.y, b.x - d.x, b.y - d.y, d.y + d.height - b.y] })()`)
	if abs(ends[0]) > 0.5 || ends[1] < 0 || ends[2] < 0 || abs(ends[3]) > 0.5 || ends[4] < 0 || ends[5] < 0 {
		t.Fatalf("loop: expected it from accumulate's right border to predict's left border, found offsets %v", ends)
	}
	shot(t, ctx, "deadlock")
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#findings li[data-actor="adapt"]`)))
	eventually(t, "adapt selected", func() bool { return count(t, ctx, `#graph g.node.selected[data-actor="adapt"]`) == 1 })
	want := lineOf(t, file, "  adapt:")
	if got := eval[string](t, ctx, `document.getElementById("yaml").dataset.line || ""`); got != strconv.Itoa(want) {
		t.Fatalf("finding clicked: expected adapt's YAML line %d selected, found %q", want, got)
	}
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#findings li[data-channel="loop"]`)))
	eventually(t, "loop selected", func() bool { return count(t, ctx, `#graph g.edge.selected[data-channel="loop"]`) == 1 })
	noConsoleErrors(t, errs)
}

func abs(x float64) float64 { return max(x, -x) }

// lineOf is the 1-based line of file that starts with prefix.
func lineOf(t *testing.T, file, prefix string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("%s: expected a line %q", file, prefix)
	return 0
}

// TestScaleInBrowser: bench/scale's 256-actor DAG opens fitted to the
// pane (its drawing's time: TestLargeGraphLegibleInBrowser), a run's
// figures update it in under 150 ms each, and the fused chains the run
// reports are folded once it ended.
func TestScaleInBrowser(t *testing.T) {
	ctx := browser(t)
	errs := consoleErrors(t, ctx)
	openGraph(t, ctx, &Server{File: "testdata/dag256.yaml"}, "a255")
	if n := count(t, ctx, "#graph g.node"); n != 256 {
		t.Fatalf("expected 256 actors drawn, found %d", n)
	}
	if k := eval[string](t, ctx, `document.getElementById("viewport").getAttribute("transform")`); !strings.Contains(k, "scale(0.") {
		t.Fatalf("expected the DAG to open fitted (zoomed out), found transform %q", k)
	}
	// A run streams figures onto the 256 boxes every 100 ms: each update
	// must leave the page responsive. Each costs the page's main thread
	// (Chromium's ThreadTime over the run, per snapshot shown: figures,
	// table, chart) at most 150 ms; the longest wall-clock time of the
	// figures alone is logged (the machine's other work stretches it).
	// The run's end draws the graph once more, its fused chains folded:
	// that drawing is counted as one more update.
	if _, err := chromedp.Call(ctx, performance.Enable, performance.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	cpu0 := threadTime(t, ctx)
	steps(t, ctx, chromedp.SetValue(chromedp.CSS("#iterations"), "3"), chromedp.Click(chromedp.CSS("#run")))
	defer func() {
		if t.Failed() {
			t.Logf("run state: %q", text(t, ctx, "#runstate"))
		}
	}()
	eventually(t, "the run to end", func() bool { return text(t, ctx, "#runstate") == "done" })
	eventually(t, "the fused chains folded", func() bool { return count(t, ctx, "#graph g.chain") > 0 })
	cpu := threadTime(t, ctx) - cpu0
	updates := eval[int](t, ctx, `+(document.getElementById("graph").dataset.updates || 0)`)
	fig, _ := strconv.ParseFloat(eval[string](t, ctx, `document.getElementById("graph").dataset.figuresMs || "-1"`), 64)
	draws := strings.Fields(eval[string](t, ctx, `document.getElementById("graph").dataset.drawsMs`))
	t.Logf("256 actors: %d snapshots shown and the graph drawn again with its %d fused chains folded (its script: %s ms wall-clock) in %.0f ms of the main thread (the run's end included); the longest update of the figures took %.0f ms wall-clock",
		updates, count(t, ctx, "#graph g.chain"), draws[len(draws)-1], cpu, fig)
	if len(draws) != 2 || count(t, ctx, "#graph g.node")+count(t, ctx, "#graph g.chain") >= 256 {
		t.Fatalf("expected the graph drawn once more at the run's end with its fused chains folded, found %d drawings, %d actor boxes and %d chains",
			len(draws), count(t, ctx, "#graph g.node"), count(t, ctx, "#graph g.chain"))
	}
	if updates < 1 || fig < 0 || cpu/float64(updates+1) > 150 {
		t.Fatalf("expected each snapshot shown (and the drawing at the end) within 150 ms of the main thread, found %d and the drawing in %.0f ms", updates, cpu)
	}
	noConsoleErrors(t, errs)
}

// TestSavedRunInBrowser records a run of cd2dat as `sluice run
// --stats-json --trace` does, then serves it as a saved run: the page
// shows its figures on the drawing and its timeline without running, and
// offers the trace for download.
func TestSavedRunInBrowser(t *testing.T) {
	stats, trace := recordRun(t, example)
	saved, err := LoadSavedRun(stats, trace)
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	errs := consoleErrors(t, ctx)
	openGraph(t, ctx, &Server{File: example, Saved: saved}, "F")
	waitChainsFolded(t, ctx)
	eventually(t, "figures on F", func() bool {
		return strings.Contains(text(t, ctx, `#graph g.node[data-actor="F"] .figure`), "/s · ")
	})
	eventually(t, "the timeline", func() bool {
		return eval[bool](t, ctx, `getComputedStyle(document.getElementById("timeline")).display === "block"`)
	})
	if href := eval[string](t, ctx, `document.getElementById("tracedl").href`); !strings.HasSuffix(href, "/api/run/trace") {
		t.Fatalf("expected the trace's download link, found %q", href)
	}
	if got := text(t, ctx, "#runstate"); !strings.Contains(got, "3 checkpoints · 1 recovery") {
		t.Fatalf("expected the run's checkpoints and recoveries beside it, found %q", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("runstate").title`); !strings.Contains(got, "the last 184 bytes; duration mean 21.0 ms") {
		t.Fatalf("expected the checkpoints' figures in the title, found %q", got)
	}
	shot(t, ctx, "saved-run")
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#dock button[data-tab="timeline"]`)))
	// The pointer over a lane names the actor that fired there.
	tip := eval[string](t, ctx, `(() => { const c = document.getElementById("timeline"), r = c.getBoundingClientRect();
		for (let x = 140; x < c.width; x += 3) {
			c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + x, clientY: r.top + 35, bubbles: true}));
			const t = document.getElementById("tltip");
			if (t.style.display === "block") return t.textContent;
		}
		return "" })()`)
	if !regexp.MustCompile(`^[A-F] on \S+ · [0-9.]+ µs · \d+ % busy$`).MatchString(tip) {
		t.Fatalf("timeline: expected the pointer to name an actor, found %q", tip)
	}
	shot(t, ctx, "saved-timeline")
	noConsoleErrors(t, errs)
}

// chainsRun is how many fused chains (of two actors or more) the server's
// last run reports (GET /api/run, asked by the page).
const chainsRun = `(() => { const x = new XMLHttpRequest(); x.open("GET", "/api/run", false); x.send();
	const n = new Map(); for (const a of JSON.parse(x.responseText).actors) if (a.fused) n.set(a.fused, (n.get(a.fused) || 0) + 1);
	return [...n.values()].filter((k) => k > 1).length })()`

// waitChainsFolded waits until the drawing folds the fused chains of the
// last run (it is made again then: its elements are replaced).
func waitChainsFolded(t *testing.T, ctx context.Context) {
	t.Helper()
	want := eval[int](t, ctx, chainsRun)
	eventually(t, fmt.Sprintf("the run's %d fused chains folded", want), func() bool { return count(t, ctx, "#graph g.chain") == want })
}

// recordRun runs file for 200 iterations (synthetic actors) and writes its
// statistics and trace as `sluice run --stats-json --trace` does.
func recordRun(t *testing.T, file string) (stats, trace string) {
	t.Helper()
	return recordRunLimited(t, file, 0)
}

// recordRunLimited is recordRun with the trace limited to limit events
// (runtime.Options.TraceLimit).
func recordRunLimited(t *testing.T, file string, limit int64) (stats, trace string) {
	t.Helper()
	g, err := spec.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	actors.Synthesize(g)
	var tr bytes.Buffer
	st, err := runtime.Run(context.Background(), g, runtime.Options{Iterations: 200, Trace: &tr, TraceLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	// As a run with --checkpoint-dir that lost a worker reports them.
	st.Checkpoints = &runtime.CheckpointStats{Completed: 3, LastID: 3, LastBytes: 184, MeanDuration: 21 * time.Millisecond, Recoveries: 1}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stats, trace = filepath.Join(dir, "stats.json"), filepath.Join(dir, "trace.json")
	if err := os.WriteFile(stats, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trace, tr.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return stats, trace
}

// TestRecordedRunInBrowser shows the image pipeline with a run recorded by
// ui/record-gpu.sh: the filters coloured by the device the mapping puts
// them on, the run's figures on the drawing and its timeline (a second
// screenshot, NAME-timeline). It uses
// testdata/imagepipe-opencl (recorded on PoCL with opencl.yaml) or, with
// SLUICE_UI_GPU_RUN=OUT, the recording of `ui/record-gpu.sh run DIR OUT`
// on a GPU machine (cuda.yaml); the screenshot is imagepipe-opencl or gpu.
// With SLUICE_UI_GPU_APP=stitch as well, OUT is a recording of APP=stitch
// (stitch-42x59-gpu.yaml, whose GPU work is done by Go actors) and the
// screenshot stitch-gpu.
func TestRecordedRunInBrowser(t *testing.T) {
	dir, mapFile, name := "testdata/imagepipe-opencl", "../examples/imagepipe/opencl.yaml", "imagepipe-opencl"
	graphFile, focus, kernels := "../examples/imagepipe/imagepipe.yaml", "blur", []string{"blur", "sobel", "motion"}
	if d := os.Getenv("SLUICE_UI_GPU_RUN"); d != "" {
		dir, mapFile, name = d, "../examples/imagepipe/cuda.yaml", "gpu"
		if os.Getenv("SLUICE_UI_GPU_APP") == "stitch" {
			mapFile, name = "../examples/stitch/cuda16.yaml", "stitch-gpu"
			graphFile, focus, kernels = "../examples/stitch/stitch-42x59-gpu.yaml", "fft", nil
		}
	}
	saved, err := LoadSavedRun(filepath.Join(dir, "stats.json"), filepath.Join(dir, "trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := spec.LoadMapping(mapFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	errs := consoleErrors(t, ctx)
	openGraph(t, ctx, &Server{File: graphFile, Mapping: m, Saved: saved}, focus)
	cpu := eval[string](t, ctx, `getComputedStyle(document.querySelector('#graph g.node[data-actor="src"] .head')).fill`)
	for _, a := range kernels {
		fill := eval[string](t, ctx, `getComputedStyle(document.querySelector('#graph g.node[data-actor="`+a+`"] .head')).fill`)
		if fill == cpu || eval[string](t, ctx, `document.querySelector('#graph g.node[data-actor="`+a+`"]').dataset.place`) == "cpu" {
			t.Fatalf("%s: expected it coloured by its device, found the CPU's colour %s", a, fill)
		}
	}
	eventually(t, "figures on "+focus, func() bool {
		return strings.Contains(text(t, ctx, `#graph g.node[data-actor="`+focus+`"] .figure`), "/s · ")
	})
	eventually(t, "the timeline", func() bool {
		return eval[bool](t, ctx, `getComputedStyle(document.getElementById("timeline")).display === "block"`)
	})
	shot(t, ctx, name)
	// The timeline: a lane per worker and one for the device.
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#dock button[data-tab="timeline"]`)))
	if n := eval[string](t, ctx, `document.getElementById("timeline").dataset.firings || ""`); n == "" || n == "0" {
		t.Fatalf("timeline: expected the recorded firings drawn, found %q", n)
	}
	// The second lane is the device's link to it: the pointer says whose
	// tokens its copies moved.
	tip := eval[string](t, ctx, `(() => { const c = document.getElementById("timeline"), r = c.getBoundingClientRect();
		for (let x = 140; x < c.width; x += 2) {
			c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + x, clientY: r.top + 22 + 26 + 13, bubbles: true}));
			const t = document.getElementById("tltip");
			if (t.style.display === "block") return t.textContent;
		}
		return "" })()`)
	if !regexp.MustCompile(`^copies for \S+ on link to \S+ · [0-9.]+ µs · \d+ % busy$`).MatchString(tip) {
		t.Fatalf("timeline: expected the pointer over the link's lane to name the copies' actor, found %q", tip)
	}
	eval[bool](t, ctx, `document.getElementById("timeline").dispatchEvent(new MouseEvent("mouseleave")) || true`)
	shot(t, ctx, name+"-timeline")
	noConsoleErrors(t, errs)
}

// diamond is a graph whose rates disagree: D fires twice per firing of A
// through B, once through C.
const diamond = `kind: graph
name: diamond
actors:
  A: {out: {x: {type: f32, rate: 1}, y: {type: f32, rate: 1}}, cost: 1us}
  B: {in: {i: {type: f32, rate: 1}}, out: {o: {type: f32, rate: 2}}, cost: 1us}
  C: {in: {i: {type: f32, rate: 1}}, out: {o: {type: f32, rate: 1}}, cost: 1us}
  D: {in: {p: {type: f32, rate: 1}, q: {type: f32, rate: 1}}, cost: 1us}
channels:
  - {from: A.x, to: B.i}
  - {from: A.y, to: C.i}
  - {from: B.o, to: D.p}
  - {from: C.o, to: D.q}
`

// TestInconsistentPaintedInBrowser: the two rate paths that disagree are
// drawn (their actors and channels outlined, D saying how often it would
// fire), and the finding selects D.
func TestInconsistentPaintedInBrowser(t *testing.T) {
	file := filepath.Join(t.TempDir(), "diamond.yaml")
	if err := os.WriteFile(file, []byte(diamond), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	errs := consoleErrors(t, ctx)
	openGraph(t, ctx, &Server{File: file}, "D")
	if v := text(t, ctx, "#verdict"); v != "inconsistent" {
		t.Fatalf("expected the verdict inconsistent, found %q", v)
	}
	if n := count(t, ctx, "#graph g.node.inconsistent"); n != 4 {
		t.Fatalf("expected A, B, C and D outlined on the rate paths, found %d", n)
	}
	if n := count(t, ctx, "#graph g.edge.rates"); n != 4 {
		t.Fatalf("expected the 4 channels of the two paths drawn, found %d", n)
	}
	if tag := text(t, ctx, `#graph g.node[data-actor="D"] .tag`); !strings.Contains(tag, "fires 2/1 or 1/1 per firing of A") {
		t.Fatalf("D: expected its two rates per firing of A, found %q", tag)
	}
	shot(t, ctx, "inconsistent")
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#findings li[data-actor="D"]`)))
	eventually(t, "D selected", func() bool { return count(t, ctx, `#graph g.node.selected[data-actor="D"]`) == 1 })
	noConsoleErrors(t, errs)
}
