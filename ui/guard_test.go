package ui

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attack is one state-changing request a hostile page would make.
type attack struct{ method, path, body string }

// attacks are the requests that change the workbench's state or the
// files: save a graph whose sink writes anywhere, edit, start a run, save
// the mapping.
func attacks() []attack {
	evil := "name: evil\nactors:\n  src: {use: gen.ramp, with: {count: 4}, out: {y: {type: f32, rate: 1}}}\n" +
		"  sink: {use: file.write, with: {path: /tmp/sluice-evil.f32}, in: {x: {type: f32, rate: 1}}, stateful: true}\n" +
		"channels:\n  - {from: src.y, to: sink.x}\n"
	ops, _ := json.Marshal(EditJSON{YAML: evil, Ops: []OpJSON{{Op: "remove_actor", Actor: "src"}}})
	return []attack{
		{"POST", "/api/save", evil},
		{"POST", "/api/edit", string(ops)},
		{"POST", "/api/run/start?iterations=1", ""},
		{"POST", "/api/mapping", `{"actor": "A", "device": "cpu"}`},
		{"POST", "/api/mapping/save", ""},
		{"POST", "/api/run/stop", ""},
	}
}

// guarded serves a copy of cd2dat with a mapping file beside it and
// returns the server, its address and the file.
func guarded(t *testing.T) (*Server, *httptest.Server, string) {
	t.Helper()
	file := tempExample(t)
	srv := &Server{File: file}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return srv, ts, file
}

// send makes req and answers its status and body.
func send(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// unchanged fails the test unless file holds want, no run started and no
// mapping file was written.
func unchanged(t *testing.T, srv *Server, file string, want []byte) {
	t.Helper()
	if got, _ := os.ReadFile(file); !bytes.Equal(got, want) {
		t.Fatalf("%s changed:\n%s", file, got)
	}
	if st := srv.ctl.state(); st.Runs != 0 || st.Running {
		t.Fatalf("expected no run, found %+v", st)
	}
	if _, err := os.Stat(strings.TrimSuffix(file, filepath.Ext(file)) + "-map.yaml"); err == nil {
		t.Fatal("a mapping file was written")
	}
	if m := srv.currentMapping(); m != nil {
		t.Fatalf("expected no mapping, found %+v", m.Actors)
	}
}

// TestForgedHostRefused: with the right token, every request whose Host
// header is not the server's (DNS rebinding: the page's own name; another
// port) is refused with 403 and a sentence, and changes nothing; the
// loopback names with the server's port are answered.
func TestForgedHostRefused(t *testing.T) {
	t.Parallel()
	srv, ts, file := guarded(t)
	orig, _ := os.ReadFile(file)
	port := ts.Listener.Addr().String()[strings.LastIndex(ts.Listener.Addr().String(), ":"):]
	for _, host := range []string{"evil.example", "evil.example" + port, "127.0.0.1:1", "localhost.evil.example" + port, "127.0.0.2" + port} {
		for _, a := range append(attacks(), attack{"GET", "/api/graph", ""}, attack{"GET", "/", ""}) {
			req, _ := http.NewRequest(a.method, ts.URL+a.path, strings.NewReader(a.body))
			req.Host = host
			req.Header.Set("Authorization", "Bearer "+srv.Token)
			code, body := send(t, req)
			if code != 403 || !strings.Contains(body, "workbench") || strings.Contains(body, "CD-to-DAT") {
				t.Fatalf("%s %s with Host %q: expected 403 with a sentence, found %d %s", a.method, a.path, host, code, body)
			}
		}
	}
	unchanged(t, srv, file, orig)
	for _, host := range []string{"127.0.0.1" + port, "localhost" + port, "[::1]" + port, "LOCALHOST" + port} {
		req, _ := http.NewRequest("GET", ts.URL+"/api/graph", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+srv.Token)
		if code, body := send(t, req); code != 200 {
			t.Fatalf("GET /api/graph with Host %q: expected 200, found %d %s", host, code, body)
		}
	}
}

// TestCrossOriginRefused: with the right token (as a cookie or in the
// query: a token that leaked), a request a page of another origin makes —
// Origin of another site or port, Sec-Fetch-Site cross-site or same-site,
// a text/plain "simple" POST — is refused with 403 and changes nothing.
func TestCrossOriginRefused(t *testing.T) {
	t.Parallel()
	srv, ts, file := guarded(t)
	orig, _ := os.ReadFile(file)
	for _, hdr := range [][2]string{
		{"Origin", "https://evil.example"},
		{"Origin", "http://127.0.0.1:1"},
		{"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
	} {
		for _, a := range append(attacks(), attack{"GET", "/api/graph", ""}, attack{"GET", "/api/run/trace", ""}) {
			req, _ := http.NewRequest(a.method, ts.URL+a.path, strings.NewReader(a.body))
			req.Header.Set(hdr[0], hdr[1])
			req.Header.Set("Content-Type", "text/plain")
			req.AddCookie(&http.Cookie{Name: CookieName(srv.Token), Value: srv.Token})
			code, body := send(t, req)
			if code != 403 || !strings.Contains(body, "cross-origin request refused") {
				t.Fatalf("%s %s with %s: %s: expected 403 with a sentence, found %d %s", a.method, a.path, hdr[0], hdr[1], code, body)
			}
		}
	}
	unchanged(t, srv, file, orig)
	// The page itself: same origin, the cookie.
	req, _ := http.NewRequest("GET", ts.URL+"/api/graph", nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: CookieName(srv.Token), Value: srv.Token})
	if code, body := send(t, req); code != 200 {
		t.Fatalf("same-origin GET /api/graph with the cookie: expected 200, found %d %s", code, body)
	}
	req, _ = http.NewRequest("POST", ts.URL+"/api/check", bytes.NewReader(orig))
	req.Header.Set("Origin", ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: CookieName(srv.Token), Value: srv.Token})
	if code, body := send(t, req); code != 200 {
		t.Fatalf("same-origin POST /api/check with the cookie: expected 200, found %d %s", code, body)
	}
}

// TestTokenRequired: every API request without the token, or with a wrong
// one (header, query or cookie), gets 401 and a sentence saying how to
// open the page; the page's own files are served without it.
func TestTokenRequired(t *testing.T) {
	t.Parallel()
	srv, ts, file := guarded(t)
	orig, _ := os.ReadFile(file)
	reads := []attack{{"GET", "/api/graph", ""}, {"GET", "/api/run", ""}, {"GET", "/api/run/trace", ""},
		{"GET", "/api/run/state", ""}, {"GET", "/api/run/events", ""}, {"POST", "/api/check", "name: x\n"}, {"GET", "/api/nope", ""}}
	for _, a := range append(attacks(), reads...) {
		for _, wrong := range []func(*http.Request){
			func(*http.Request) {},
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+srv.Token+"x") },
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") },
			func(r *http.Request) { r.URL.RawQuery += "&token=" + srv.Token[:31] },
			func(r *http.Request) { r.AddCookie(&http.Cookie{Name: CookieName(srv.Token), Value: "x" + srv.Token}) },
			func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "sluice_ui_other", Value: srv.Token}) },
		} {
			req, _ := http.NewRequest(a.method, ts.URL+a.path, strings.NewReader(a.body))
			wrong(req)
			code, body := send(t, req)
			if code != 401 || !strings.Contains(body, "expected the workbench's token") || strings.Contains(body, "CD-to-DAT") {
				t.Fatalf("%s %s (%v): expected 401 with a sentence, found %d %s", a.method, a.path, req.Header, code, body)
			}
		}
	}
	unchanged(t, srv, file, orig)
	for _, p := range []string{"/", "/app.js", "/style.css", "/favicon.ico"} {
		if code, _ := send(t, mustReq("GET", ts.URL+p)); code != 200 {
			t.Fatalf("GET %s without the token: expected the page's file, found %d", p, code)
		}
	}
	for _, auth := range []func(*http.Request){
		func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+srv.Token) },
		func(r *http.Request) { r.URL.RawQuery = "token=" + srv.Token },
		func(r *http.Request) { r.AddCookie(&http.Cookie{Name: CookieName(srv.Token), Value: srv.Token}) },
	} {
		req := mustReq("GET", ts.URL+"/api/graph")
		auth(req)
		if code, body := send(t, req); code != 200 || !strings.Contains(body, "CD-to-DAT") {
			t.Fatalf("GET /api/graph with the token: expected 200, found %d %s", code, body)
		}
	}
}

func mustReq(method, url string) *http.Request {
	r, err := http.NewRequest(method, url, nil)
	if err != nil {
		panic(err)
	}
	return r
}

// TestTokenCookie: the address with the token sets a SameSite=Strict,
// HttpOnly cookie scoped to / and sends the browser to the address without
// the token, after which the API answers with the cookie alone; a wrong
// token in the address is refused with 403 and a sentence and sets none.
func TestTokenCookie(t *testing.T) {
	t.Parallel()
	srv, ts, _ := guarded(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(ts.URL + "/?token=" + srv.Token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("GET /?token=…: expected 303 to /, found %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cs := resp.Cookies()
	if len(cs) != 1 || cs[0].Name != CookieName(srv.Token) || cs[0].Value != srv.Token || !cs[0].HttpOnly ||
		cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != "/" {
		t.Fatalf("expected one HttpOnly SameSite=Strict cookie for /, found %+v", cs)
	}
	if sc := resp.Header.Get("Set-Cookie"); !strings.Contains(sc, "SameSite=Strict") || !strings.Contains(sc, "HttpOnly") {
		t.Fatalf("Set-Cookie: expected SameSite=Strict and HttpOnly, found %q", sc)
	}
	resp, err = noFollow.Get(ts.URL + "/?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || len(resp.Cookies()) != 0 || !strings.Contains(string(b), "not this workbench's") {
		t.Fatalf("GET /?token=wrong: expected 403 with a sentence and no cookie, found %d %q %v", resp.StatusCode, b, resp.Cookies())
	}
	// A client with a cookie jar, as a browser: the printed address, then
	// the API with the cookie alone.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err = c.Get(ts.URL + "/?token=" + srv.Token)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `id="yaml"`) || resp.Request.URL.RawQuery != "" {
		t.Fatalf("the printed address: expected the page at / (no token), found %d at %s", resp.StatusCode, resp.Request.URL)
	}
	resp, err = c.Get(ts.URL + "/api/graph")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/graph with the cookie: expected 200, found %d", resp.StatusCode)
	}
	// Two workbenches on one machine keep their own cookies.
	if CookieName("a") == CookieName("b") {
		t.Fatal("expected one cookie name per token")
	}
}

// TestTokenMadeWhenEmpty: Handler makes a random 32-hex-digit token for a
// server given none, a different one per server.
func TestTokenMadeWhenEmpty(t *testing.T) {
	t.Parallel()
	a, b := &Server{}, &Server{}
	a.Handler()
	b.Handler()
	if len(a.Token) != 32 || a.Token == b.Token {
		t.Fatalf("expected two different 32-hex-digit tokens, found %q and %q", a.Token, b.Token)
	}
}
