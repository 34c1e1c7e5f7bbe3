package ui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// hostilePage is a page of another origin (another port of 127.0.0.1:
// same site, so the workbench's SameSite=Strict cookie goes with its
// requests) that tries every state-changing request against the
// workbench at W: fetch without CORS, fetch with CORS and credentials, and
// a form POST into a hidden frame; half of them carry the token T, as if
// it had leaked. window.done is set once all have settled.
const hostilePage = `<!doctype html><html><body><script>
const W = %q, T = %q, evil = %q, edit = %q;
const targets = [["/api/save", evil], ["/api/edit", edit], ["/api/run/start?iterations=1", ""],
  ["/api/mapping", '{"actor": "A", "device": "cpu"}'], ["/api/mapping/save", ""]];
window.results = [];
const jobs = [];
for (const [path, body] of targets) {
  for (const tok of ["", T]) {
    const url = W + path + (tok ? (path.includes("?") ? "&" : "?") + "token=" + tok : "");
    for (const mode of ["no-cors", "cors"]) {
      jobs.push(fetch(url, {method: "POST", mode, credentials: "include", headers: {"Content-Type": "text/plain"}, body})
        .then((r) => results.push(mode + " " + path + " " + r.status + " " + r.type), (e) => results.push(mode + " " + path + " " + e)));
    }
    jobs.push(new Promise((done) => {
      const f = document.createElement("iframe"); f.name = "f" + jobs.length; document.body.appendChild(f);
      const form = document.createElement("form"); form.method = "POST"; form.action = url; form.enctype = "text/plain"; form.target = f.name;
      const i = document.createElement("input"); i.name = body.slice(0, 20) || "x"; i.value = body.slice(20); form.appendChild(i);
      document.body.appendChild(form); f.onload = () => { results.push("form " + path); done(); }; form.submit();
    }));
  }
}
Promise.allSettled(jobs).then(() => { window.done = true; });
</script></body></html>`

// TestHostilePageInBrowser: the user has the workbench open (the browser
// holds its cookie); a page served by another local server on another
// port tries fetch (no-cors and cors) and form POSTs against save, edit,
// run start and mapping save, with and without the token: the graph file
// is unchanged byte for byte, no run starts, no mapping is set or written.
// Then the same requests, with the token, from a Go client with a forged
// Host header get 403.
func TestHostilePageInBrowser(t *testing.T) {
	ctx := browser(t)
	srv, ts, file := guarded(t)
	orig, _ := os.ReadFile(file)
	steps(t, ctx, chromedp.Navigate(ts.URL+"/?token="+srv.Token), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="F"]`)))

	as := attacks()
	// A graph the root lets in: only the origin check stands in its way.
	evil := string(orig) + "\n# written by a hostile page\n"
	page := fmt.Sprintf(hostilePage, ts.URL, srv.Token, evil, as[1].body)
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	defer hostile.Close()
	steps(t, ctx, chromedp.Navigate(hostile.URL+"/"))
	eventually(t, "the hostile page's requests settled", func() bool { return eval[bool](t, ctx, `window.done === true`) })
	results := eval[[]string](t, ctx, `window.results`)
	if len(results) != 30 {
		t.Fatalf("expected 30 requests tried (5 targets × 2 tokens × 3 ways), found %d: %q", len(results), results)
	}
	time.Sleep(200 * time.Millisecond) // a run started would show by now
	unchanged(t, srv, file, orig)

	for _, a := range as {
		req, _ := http.NewRequest(a.method, ts.URL+a.path, strings.NewReader(a.body))
		req.Host = "evil.example"
		req.Header.Set("Authorization", "Bearer "+srv.Token)
		if code, body := send(t, req); code != 403 || !strings.Contains(body, "not this workbench's address") {
			t.Fatalf("%s %s with a forged Host: expected 403 with a sentence, found %d %s", a.method, a.path, code, body)
		}
	}
	unchanged(t, srv, file, orig)

	// The workbench's own page still saves.
	steps(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="F"]`)))
	eval[bool](t, ctx, `(() => { const t = document.getElementById("yaml"); t.value = t.value + "\n# saved by the page\n";
		t.dispatchEvent(new Event("input")); return true })()`)
	time.Sleep(500 * time.Millisecond) // the check of the edit answers
	steps(t, ctx, chromedp.Click(chromedp.CSS("#save")))
	eventually(t, "the page's save", func() bool {
		b, _ := os.ReadFile(file)
		return strings.Contains(string(b), "# saved by the page")
	})
}
