package ui

import (
	"context"
	"fmt"
	"net/http/httptest"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/calibrate"
)

// threadTime is the CPU time of the page's main thread so far, in ms.
func threadTime(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	m, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range m.Metrics {
		if x.Name == "ThreadTime" {
			return x.Value * 1000
		}
	}
	t.Fatal("performance metrics: expected ThreadTime, found none")
	return 0
}

// visibleLabels is the smallest rendered size (px, the zoom applied) of
// the texts of the drawing that show (their box, or a parent, not hidden
// by the level of detail) and are in the pane, how many there are, and
// how many of them name actors.
const visibleLabels = `(() => { const pane = document.getElementById("graph").getBoundingClientRect();
	let min = 1e9, n = 0, names = 0;
	for (const t of document.querySelectorAll("#graph text")) {
		if (!t.textContent.trim() || !t.checkVisibility()) continue;
		const b = t.getBoundingClientRect();
		if (b.right < pane.left || b.left > pane.right || b.bottom < pane.top || b.top > pane.bottom) continue;
		min = Math.min(min, parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a); n++;
		if (t.classList.contains("name")) names++;
	}
	return [min, n, names] })()`

// legendCovers counts the actors' boxes on screen (their part inside the
// drawing's pane, which clips them) that the legend's box meets.
const legendCovers = `(() => { const l = document.getElementById("legend").getBoundingClientRect();
	const p = document.getElementById("graph").getBoundingClientRect();
	if (!l.width || !l.height) return -1;
	let n = 0;
	for (const b of document.querySelectorAll("#graph g.node .box")) {
		const r = b.getBoundingClientRect();
		const x0 = Math.max(r.left, p.left), x1 = Math.min(r.right, p.right), y0 = Math.max(r.top, p.top), y1 = Math.min(r.bottom, p.bottom);
		if (x1 <= x0 || y1 <= y0) continue;
		if (x1 > l.left && x0 < l.right && y1 > l.top && y0 < l.bottom) n++;
	}
	return n })()`

// zoom is the viewport's scale.
const zoom = `(() => { const m = document.getElementById("viewport").getAttribute("transform").match(/scale\(([0-9.]+)\)/); return m ? +m[1] : 0 })()`

// openTimed opens the page of the server at url in a fresh browser
// (nothing cached: the page compiles its code and lays out its fonts as
// it loads and waits for the graph) and waits for the opening drawing's
// frame: the first figure of the page's data-frames-ms. It polls with a
// plain evaluation every 50 ms, not chromedp's WaitReady: that one asks
// DOM.querySelector every 5 ms, and the query that first found a box of
// the new drawing took 26 to 40 ms of the page's main thread, inside the
// time measured (seen in a Chromium trace). Returns the browser, the
// errors it reports from the start, and the opening drawing's time in ms.
func openTimed(t *testing.T, url string) (context.Context, func() []string, float64) {
	t.Helper()
	ctx := freshBrowser(t)
	errs := consoleErrors(t, ctx)
	steps(t, ctx, chromedp.Navigate(url))
	frames := `document.getElementById("graph").dataset.framesMs || ""`
	eventually(t, "the opening drawing painted", func() bool { return eval[string](t, ctx, frames) != "" })
	f := strings.Fields(eval[string](t, ctx, frames))
	ms, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		t.Fatalf("data-frames-ms: expected figures in ms, found %q", f)
	}
	return ctx, errs, ms
}

// hostAvailability is how much of the CPU a busy goroutine per core gets
// over 50 ms (calibrate.Availability), measured before a timed drawing:
// the page's drawing needs the browser's threads and the server's, and on
// a host whose cores other work takes the wall-clock says nothing of the
// page.
func hostAvailability() float64 {
	return calibrate.Availability(goruntime.NumCPU(), 50*time.Millisecond)
}

// judge fails t with the message when the host gave the busy goroutines
// at least 90 % of the CPU before one of the timed drawings (avail), and
// otherwise logs that the host was too loaded to judge, as the tests that
// time the runtime do.
func judge(t *testing.T, avail []float64, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if slices.Max(avail) >= 0.9 {
		t.Fatalf("%s; a busy goroutine per core got %.2f of the CPU before each", msg, avail)
	}
	t.Logf("the host is too loaded to time the drawing (a busy goroutine per core got %.2f of the CPU before each, under 0.90): not judged: %s", avail, msg)
}

// maxTimed is how many openings (or drawings again) a timed check makes
// at most before it judges the best: one more only while every one so far
// took longer than the goal, which the machine's other work (the rest of
// the test suite, on two cores) stretches, and while the host gave the
// last one the CPU to be judged (see judge: another fresh browser on a
// host too loaded to judge costs seconds of CPU and decides nothing).
const maxTimed = 5

// again says whether a timed check makes one more measurement: fewer than
// maxTimed made (n), all slower than the goal (best), and the host's
// availability before the last one enough to judge it.
func again(n int, best float64, avail []float64) bool {
	return n < maxTimed && best > 250 && avail[len(avail)-1] >= 0.9
}

// TestLargeGraphLegibleInBrowser opens bench/scale's 256-actor DAG: the
// opening drawing takes at most 250 ms from the graph's answer to the
// frame painted (the best of up to maxTimed openings, each in a fresh
// browser, see openTimed: another one only while all took longer and
// the host was quiet enough to judge them);
// at the opening view every text shown is 11 px or more
// (the layers folded into labelled groups), the legend covers no actor,
// the repetition vector is one folded line; a drawing again (a keystroke
// in the YAML) takes at most 250 ms too (the best of three, or of up to
// maxTimed while all took longer), both judged only when the host gave a
// busy goroutine per core 90 % of the CPU before one of them (judge: a
// fresh clone's suite on two cores took 289–428 ms in five openings,
// 74–91 ms quiet); zooming out
// stops where the groups' labels stay legible, a group opens on click (its
// actors' names appear), the search box centres an actor.
func TestLargeGraphLegibleInBrowser(t *testing.T) {
	srv := &Server{File: "testdata/dag256.yaml"}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	var ctx context.Context
	var errs func() []string
	var opening, openAvail []float64
	for len(opening) == 0 || again(len(opening), slices.Min(opening), openAvail) {
		if ctx != nil {
			if err := chromedp.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var ms float64
		openAvail = append(openAvail, hostAvailability())
		ctx, errs, ms = openTimed(t, ts.URL+"/?token="+srv.Token)
		opening = append(opening, ms)
	}
	t.Logf("256 actors, the opening drawing: the answer to the frame painted, wall-clock: %.0f ms (each in a fresh browser; a busy goroutine per core got %.2f of the CPU before each)", opening, openAvail)
	if n := count(t, ctx, "#graph g.node"); n != 256 {
		t.Fatalf("expected 256 actors drawn, found %d", n)
	}
	got := eval[[]float64](t, ctx, visibleLabels)
	if got[1] < 4 || got[0] < 11 {
		t.Fatalf("opening view: expected every text shown at 11 px or more (the groups' labels at least), found the smallest at %.2f px of %.0f texts", got[0], got[1])
	}
	if lod := eval[string](t, ctx, `document.getElementById("graph").dataset.lod`); lod != "overview" {
		t.Fatalf("opening view: expected the overview of groups, found level %q", lod)
	}
	if g := count(t, ctx, "#graph g.group"); g < 4 || g > 8 {
		t.Fatalf("expected the layers folded into 4 to 8 groups, found %d", g)
	}
	if n := eval[int](t, ctx, legendCovers); n != 0 {
		t.Fatalf("opening view: expected the legend to cover no actor, found it over %d (or no legend: -1)", n)
	}
	if r := text(t, ctx, "#findings .reps"); !strings.Contains(r, "=1 for all 256 actors") || len(r) > 120 {
		t.Fatalf("expected the repetition vector folded into one line, found %q", r)
	}
	shot(t, ctx, "scale")
	// The opening drawing, timed in the page from the graph's answer to
	// the frame painted (wall-clock, performance.now() and
	// requestAnimationFrame: the page's data-frames-ms): the best of the
	// openings at most 250 ms (the machine's other work stretches the
	// others).
	if best := slices.Min(opening); best > 250 {
		judge(t, openAvail, "expected the opening drawing of 256 actors within 250 ms from the answer to the frame painted (the best of %d openings, each in a fresh browser), found %.0f ms", len(opening), opening)
	}

	// Drawing again: three more (the text checked again, the view kept),
	// timed likewise, the best of the three at most 250 ms; the CPU time
	// of the page's main thread per check (Chromium's ThreadTime: the
	// request, the answer, the drawing) is logged.
	if _, err := chromedp.Call(ctx, performance.Enable, performance.EnableParams{TimeDomain: performance.EnableTimeDomainThreadTicks}); err != nil {
		t.Fatal(err)
	}
	var cpu, walls, drawAvail []float64
	for len(walls) < 4 || again(len(walls)-1, slices.Min(walls[1:]), drawAvail) {
		drawAvail = append(drawAvail, hostAvailability())
		before := eval[string](t, ctx, `document.getElementById("graph").dataset.framesMs || ""`)
		t0 := threadTime(t, ctx)
		eval[bool](t, ctx, `(() => { document.getElementById("yaml").dispatchEvent(new Event("input")); return true })()`)
		eventually(t, "a redraw", func() bool {
			return eval[string](t, ctx, `document.getElementById("graph").dataset.framesMs || ""`) != before
		})
		cpu = append(cpu, threadTime(t, ctx)-t0)
		walls = walls[:0]
		for _, f := range strings.Fields(eval[string](t, ctx, `document.getElementById("graph").dataset.framesMs`)) {
			w, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			walls = append(walls, w)
		}
		if len(walls) != len(cpu)+1 {
			t.Fatalf("expected the opening drawing and %d more timed, found %v", len(cpu), walls)
		}
	}
	t.Logf("256 actors: the answer to the frame painted, wall-clock: %.0f ms opening, %.0f ms redrawn; main thread CPU per check and drawing: %.0f ms; the drawings' script: %s ms",
		walls[0], walls[1:], cpu, eval[string](t, ctx, `document.getElementById("graph").dataset.drawsMs`))
	if best := slices.Min(walls[1:]); best > 250 {
		judge(t, drawAvail, "expected a drawing of 256 actors within 250 ms from the answer to the frame painted (the best of %d), found %.0f ms", len(walls)-1, walls[1:])
	}

	// Zoom out as far as it goes: the groups' labels stay legible.
	k0 := eval[float64](t, ctx, zoom)
	eval[bool](t, ctx, `(() => { for (let i = 0; i < 15; i++) document.getElementById("zoomout").click(); return true })()`)
	if k := eval[float64](t, ctx, zoom); k < 0.9*k0 {
		t.Fatalf("zoom out: expected it to stop near the whole drawing (%.3f), found %.3f", k0, k)
	}
	if got := eval[[]float64](t, ctx, visibleLabels); got[0] < 11 || got[1] < 4 {
		t.Fatalf("zoomed out: expected the texts shown at 11 px or more, found %.2f px of %.0f", got[0], got[1])
	}

	// A group opens on click: its actors' names and ports come, legible.
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph g.group[data-group="g2"] text.glabel`)))
	eventually(t, "the group opened", func() bool {
		return eval[string](t, ctx, `document.getElementById("graph").dataset.lod`) == "detail"
	})
	eventually(t, "names in view", func() bool { return eval[[]float64](t, ctx, visibleLabels)[2] >= 4 })
	if got := eval[[]float64](t, ctx, visibleLabels); got[0] < 11 {
		t.Fatalf("group opened: expected the texts shown at 11 px or more, found %.2f px of %.0f", got[0], got[1])
	}
	if n := eval[int](t, ctx, legendCovers); n != 0 {
		t.Fatalf("group opened: expected the legend to cover no actor, found it over %d", n)
	}
	shot(t, ctx, "scale-group")

	// The search box finds an actor and centres it, legible, selected.
	steps(t, ctx, chromedp.Click(chromedp.CSS("#fit")), chromedp.SendKeys(chromedp.CSS("#search"), "a137\r"))
	eventually(t, "a137 selected", func() bool { return count(t, ctx, `#graph g.node.selected[data-actor="a137"]`) == 1 })
	centre := eval[[]float64](t, ctx, `(() => { const p = document.getElementById("graph").getBoundingClientRect();
		const n = document.querySelector('#graph g.node[data-actor="a137"]');
		const b = n.querySelector(".box").getBoundingClientRect(), name = n.querySelector(".name");
		return [b.left + b.width / 2 - (p.left + p.width / 2), b.top + b.height / 2 - (p.top + 46 + (p.height - 46) / 2),
			name && name.checkVisibility() ? parseFloat(getComputedStyle(name).fontSize) * name.getScreenCTM().a : 0] })()`)
	if abs(centre[0]) > 2 || abs(centre[1]) > 2 || centre[2] < 11 {
		t.Fatalf("search a137: expected its box centred in the pane and its name at 11 px or more, found offsets %.1f, %.1f and the name at %.1f px", centre[0], centre[1], centre[2])
	}
	if p := text(t, ctx, "#panel h2"); p != "actor a137" {
		t.Fatalf("search a137: expected its panel, found %q", p)
	}
	shot(t, ctx, "scale-search")
	noConsoleErrors(t, errs)
}

// TestLegendBesideInBrowser: on cd2dat and on the 64-actor DAG the legend
// covers no actor at the opening view nor fitted.
func TestLegendBesideInBrowser(t *testing.T) {
	for _, c := range []struct{ file, first string }{{"../examples/cd2dat.yaml", "F"}, {"testdata/dag64.yaml", "a000"}} {
		t.Run(c.first, func(t *testing.T) {
			ctx := browser(t)
			openGraph(t, ctx, &Server{File: c.file}, c.first)
			if n := eval[int](t, ctx, legendCovers); n != 0 {
				t.Fatalf("opening view: expected the legend to cover no actor, found it over %d", n)
			}
			steps(t, ctx, chromedp.Click(chromedp.CSS("#fit")))
			if n := eval[int](t, ctx, legendCovers); n != 0 {
				t.Fatalf("fitted: expected the legend to cover no actor, found it over %d", n)
			}
			if got := eval[[]float64](t, ctx, visibleLabels); got[0] < 11 {
				t.Fatalf("fitted: expected the texts shown at 11 px or more, found %.2f px of %.0f", got[0], got[1])
			}
		})
	}
}
