package ui

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/internal/testtmp"
)

// browser opens a tab of the package's shared headless Chromium (started
// on first use, stopped by TestMain), or skips the test when Chromium is
// absent (fails instead with SLUICE_REQUIRE_CHROMIUM=1). Each test's tab
// is its own page on its own server (its own origin); closing it at the
// test's end leaves the browser to the next test, which saves a browser's
// start (seconds of CPU) per test.
func browser(t *testing.T) context.Context {
	t.Helper()
	b, err := shared.browser()
	if err != nil {
		t.Fatalf("headless Chromium: %v", err)
	}
	if b == nil {
		skipNoChromium(t)
	}
	ctx, cancelTab := chromedp.NewContext(b)
	ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancel(); cancelTab() })
	return ctx
}

// freshBrowser starts a headless Chromium of the test's own, for what
// must be measured cold (the page's first drawing).
func freshBrowser(t *testing.T) context.Context {
	t.Helper()
	path, ok := chromiumPath()
	if !ok {
		skipNoChromium(t)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromiumOptions(path)...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	return ctx
}

func chromiumPath() (string, bool) {
	path, err := exec.LookPath("chromium")
	return path, err == nil
}

func chromiumOptions(path string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 900))
}

func skipNoChromium(t *testing.T) {
	t.Helper()
	if os.Getenv("SLUICE_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium: expected it on PATH (SLUICE_REQUIRE_CHROMIUM=1), found none; run scripts/install-chromium.sh")
	}
	t.Skip("chromium is not on PATH: run scripts/install-chromium.sh to test the page")
}

// sharedChromium is the package's one headless Chromium for browser.
type sharedChromium struct {
	mu     sync.Mutex
	ctx    context.Context // the browser's first tab: new tabs open from it
	cancel func()
	err    error
	tried  bool
}

var shared sharedChromium

// browser returns the running browser's context, starting it on first
// use; nil with no error when there is no Chromium.
func (s *sharedChromium) browser() (context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tried {
		return s.ctx, s.err
	}
	s.tried = true
	path, ok := chromiumPath()
	if !ok {
		return nil, nil
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromiumOptions(path)...)
	ctx, cancelB := chromedp.NewContext(actx)
	if _, err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil { // starts it
		cancelB()
		cancelA()
		s.err = err
		return nil, err
	}
	s.ctx, s.cancel = ctx, func() { cancelB(); cancelA() }
	return s.ctx, nil
}

// stop ends the shared browser, if it started.
func (s *sharedChromium) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
}

// TestMain stops the shared browser once every test has run.
func TestMain(m *testing.M) {
	os.Exit(testtmp.Run(func() int {
		code := m.Run()
		shared.stop()
		return code
	}))
}

// shot saves a PNG of the page as DIR/name.png when SLUICE_UI_SCREENSHOTS=DIR.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("SLUICE_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// text is the text content of the element sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// steps runs each action in turn, failing the test at the first error.
func steps(t *testing.T, ctx context.Context, acts ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for i, a := range acts {
		if _, err := chromedp.Run(ctx, a); err != nil {
			t.Fatalf("browser step %d: %v", i+1, err)
		}
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// eventually polls cond every 50 ms for 45 s: a condition the page meets
// in well under a second on a quiet machine, given room for a loaded one
// running the race detector (it returns as soon as cond holds).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(45 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("expected %s within 45 s", what)
}

// TestPageInBrowser drives the page in headless Chromium: the graph of
// cd2dat drawn, an edited rate changing check's verdict, a save surviving a
// reload, then a run of the saved graph (its actors have no code yet: they
// fire as synthetic ones for their cost) with rising firings, and its
// timeline.
func TestPageInBrowser(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // predictions on this host's CPU cores, whatever model is cached
	ctx := browser(t)
	file := tempExample(t)
	ts := httptest.NewServer((&Server{File: file, Token: "tok"}).Handler())
	defer ts.Close()
	url := ts.URL + "/?token=tok"

	steps(t, ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="F"]`)))
	nodes := eval[int](t, ctx, `document.querySelectorAll("#graph g.node").length`)
	if nodes != 6 {
		t.Fatalf("cd2dat: expected 6 actor nodes, found %d", nodes)
	}
	if v, f := text(t, ctx, "#verdict"), text(t, ctx, "#findings"); v != "valid" || !strings.Contains(f, "A=147") {
		t.Fatalf("cd2dat: expected verdict valid with A=147, found %q, %q", v, f)
	}
	shot(t, ctx, "graph")

	// C consumes 4 instead of 3: still consistent, A=98 instead of 147.
	edit := `(() => { const t = document.getElementById("yaml");
		t.value = t.value.replace("in:  {i: {type: f32, rate: 3}}", "in:  {i: {type: f32, rate: 4}}");
		t.dispatchEvent(new Event("input")); return true })()`
	eval[bool](t, ctx, edit)
	eventually(t, "A=98 after C's rate 3 → 4", func() bool { return strings.Contains(text(t, ctx, "#findings"), "A=98") })
	steps(t, ctx, chromedp.Click(chromedp.CSS("#yamltoggle")))
	time.Sleep(300 * time.Millisecond) // the drawing refits to the narrower pane
	shot(t, ctx, "edited")
	steps(t, ctx, chromedp.Click(chromedp.CSS("#yamltoggle")))

	// YAML that does not parse: the verdict says error, with file:line:col.
	eval[bool](t, ctx, `(() => { const t = document.getElementById("yaml"); window.good = t.value;
		t.value = t.value + "\n  - {from: [\n"; t.dispatchEvent(new Event("input")); return true })()`)
	eventually(t, "the verdict error", func() bool { return text(t, ctx, "#verdict") == "error" })
	if e := text(t, ctx, "#errors"); !strings.Contains(e, "cd2dat.yaml:") {
		t.Fatalf("bad YAML: expected errors with cd2dat.yaml:line:col, found %q", e)
	}
	eval[bool](t, ctx, `(() => { const t = document.getElementById("yaml"); t.value = window.good;
		t.dispatchEvent(new Event("input")); return true })()`)
	eventually(t, "the verdict valid again", func() bool { return text(t, ctx, "#verdict") == "valid" })

	steps(t, ctx, chromedp.Click(chromedp.CSS("#save")))
	eventually(t, "saved", func() bool { return text(t, ctx, "#saved") == "saved" })
	if got, _ := os.ReadFile(file); !strings.Contains(string(got), "in:  {i: {type: f32, rate: 4}}") {
		t.Fatal("save: the file does not hold the edit")
	}
	steps(t, ctx, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="F"]`)))
	eventually(t, "A=98 after the reload", func() bool { return strings.Contains(text(t, ctx, "#findings"), "A=98") })

	// F's firings per iteration, from the repetition vector shown.
	m := regexp.MustCompile(`F=(\d+)`).FindStringSubmatch(text(t, ctx, "#findings"))
	if m == nil {
		t.Fatalf("expected F's count in the findings, found %q", text(t, ctx, "#findings"))
	}
	perIter, _ := strconv.ParseInt(m[1], 10, 64)
	const iters = 200
	n := iters * perIter
	steps(t, ctx, chromedp.SetValue(chromedp.CSS("#iterations"), strconv.Itoa(iters)), chromedp.Click(chromedp.CSS("#run")))
	var seen []int64
	eventually(t, "the run to end", func() bool {
		s := eval[string](t, ctx, `(document.querySelector('#firings tr[data-actor="F"] td:nth-child(2)')||{}).textContent||"0"`)
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && (len(seen) == 0 || v != seen[len(seen)-1]) {
			seen = append(seen, v)
			if len(seen) == 2 {
				shot(t, ctx, "running")
			}
		}
		return text(t, ctx, "#runstate") == "done"
	})
	// The run may have ended between the last read of F's firings and of
	// the state: read them once more.
	if s := eval[string](t, ctx, `document.querySelector('#firings tr[data-actor="F"] td:nth-child(2)').textContent`); s != "" {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && v != seen[len(seen)-1] {
			seen = append(seen, v)
		}
	}
	if len(seen) < 2 || seen[len(seen)-1] != n {
		t.Fatalf("F's firings: expected them to rise to %d, saw %v", n, seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Fatalf("F's firings went down: %v", seen)
		}
	}
	// The figures on the drawing: F's firings/s and busy share, and the
	// graph's throughput chart.
	if f := text(t, ctx, `#graph g.node[data-actor="F"] .figure`); !regexp.MustCompile(`^[0-9.]+[kM]?/s · \d+ %$`).MatchString(f) {
		t.Fatalf("after the run: expected F's firings/s and busy share on its box, found %q", f)
	}
	if count(t, ctx, "#chart .uplot") != 1 {
		t.Fatal("after the run: expected the throughput chart")
	}
	eventually(t, "the throughput over the run from its trace", func() bool {
		return eval[string](t, ctx, `document.getElementById("chart").dataset.source || ""`) == "trace:F"
	})
	eventually(t, "the timeline", func() bool {
		return eval[bool](t, ctx, `getComputedStyle(document.getElementById("timeline")).display === "block"`)
	})
	painted := eval[bool](t, ctx, `(() => { const c = document.getElementById("timeline");
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		for (let i = 0; i < d.length; i += 4) if (d[i+3] && (d[i] !== d[i+1] || d[i+1] !== d[i+2])) return true;
		return false })()`)
	if !painted {
		t.Fatal("timeline: expected coloured slices, found none")
	}
	before := eval[string](t, ctx, `document.getElementById("timeline").toDataURL()`)
	whole := eval[string](t, ctx, `document.getElementById("timeline").dataset.firings`)
	for range 3 {
		eval[bool](t, ctx, `document.getElementById("timeline").dispatchEvent(new WheelEvent("wheel", {deltaY: -100, clientX: 900, clientY: 700, cancelable: true}))`)
	}
	if after := eval[string](t, ctx, `document.getElementById("timeline").toDataURL()`); after == before {
		t.Fatal("timeline: expected the wheel to zoom it, found it unchanged")
	}
	// The zoomed window's buckets come from the server: fewer firings in view.
	eventually(t, "the zoomed window's buckets", func() bool {
		n, _ := strconv.Atoi(eval[string](t, ctx, `document.getElementById("timeline").dataset.firings`))
		all, _ := strconv.Atoi(whole)
		return n > 0 && n < all
	})
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#dock button[data-tab="timeline"]`)))
	shot(t, ctx, "timeline")

	// Predicted vs measured, per actor and for the graph.
	eventually(t, "the predicted vs measured table", func() bool { return count(t, ctx, `#compare tr[data-actor="F"]`) == 1 })
	if g := text(t, ctx, `#compare tr.graphrow`); !regexp.MustCompile(`^graph \(iterations\)[0-9.]+ [kM]?[0-9.]+ [kM]?[0-9.]+$`).MatchString(g) {
		t.Fatalf("predicted vs measured: expected the graph's two rates, found %q", g)
	}
	if f := eval[string](t, ctx, `[...document.querySelectorAll('#compare tr[data-actor="F"] td')].map(td => td.textContent).join("|")`); !strings.HasPrefix(f, "F|80|") || strings.Contains(f, "–") {
		t.Fatalf("predicted vs measured for F: expected q=80 and both rates, found %q", f)
	}

}

// TestClusterViewInBrowser: with a broker and a worker on loopback, the
// page draws the broker, the worker under it and the worker's device.
func TestClusterViewInBrowser(t *testing.T) {
	ctx := browser(t)
	cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := cluster.StartBroker(cctx, cluster.BrokerOptions{Name: "root", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	cpu := device.Info{ID: "cpu", Backend: "cpu", Name: "test cpu", Kind: device.CPU, ComputeUnits: 2, GlobalMem: 1 << 30, HostUnified: true}
	w, err := cluster.StartWorker(cctx, cluster.WorkerOptions{Broker: b.ClientURL(), Name: "w1", Devices: []device.Info{cpu}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c, err := cluster.Connect(cctx, b.ClientURL(), cluster.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := &Server{File: tempExample(t), Cluster: c}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	steps(t, ctx, chromedp.Navigate(ts.URL+"/?token="+srv.Token), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="F"]`)))
	// The worker registers with the broker shortly after it starts: reload
	// until the page shows it.
	defer func() {
		if t.Failed() {
			t.Logf("cluster panel: %s", eval[string](t, ctx, `document.getElementById("cluster").innerHTML`))
		}
	}()
	// (A tree query waits a moment for late answers: reload every 3 s.)
	loaded := time.Now()
	eventually(t, "worker w1 under broker root", func() bool {
		if eval[bool](t, ctx, `!!document.querySelector('#cluster li.broker[data-broker="root"] li.worker[data-worker="w1"]')`) {
			return true
		}
		if time.Since(loaded) > 3*time.Second {
			steps(t, ctx, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="F"]`)))
			loaded = time.Now()
		}
		return false
	})
	if d := text(t, ctx, `#cluster li.worker[data-worker="w1"] li.device`); !strings.Contains(d, "cpu: test cpu 1.0 GiB") {
		t.Fatalf("expected the worker's device listed, found %q", d)
	}
	shot(t, ctx, "cluster")
}
