package ui

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The workbench's answer to a web page the user happens to visit: every
// request must name this server in its Host header (no DNS rebinding), no
// request may come from another origin (no cross-site or same-site forgery)
// and every API request must carry the server's token, which the page gets
// once from the address `sluice ui` prints and keeps in a SameSite=Strict,
// HttpOnly cookie. See docs/security.md, "Workbench".

// guard checks the Host, the origin and the token of every request before
// next serves it.
type guard struct {
	next       http.Handler
	token      []byte
	cookie     string   // the cookie's name, one per token (cookies do not tell ports apart)
	allowHosts []string // more names the Host header may give, lower case
	cop        *http.CrossOriginProtection
	generated  bool // the token was made by Handler, not given
}

// newGuard guards next with s's token and allowed hosts.
func newGuard(s *Server, next http.Handler, generated bool) *guard {
	g := &guard{next: next, token: []byte(s.Token), cookie: CookieName(s.Token),
		cop: http.NewCrossOriginProtection(), generated: generated}
	for _, h := range s.AllowHosts {
		g.allowHosts = append(g.allowHosts, strings.TrimSuffix(strings.ToLower(h), "."))
	}
	return g
}

// CookieName is the name of the cookie that carries the token of a server
// whose token is token: one name per token, so that two workbenches on one
// machine (cookies do not tell ports apart) keep their own.
func CookieName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sluice_ui_" + hex.EncodeToString(sum[:6])
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "frame-ancestors 'none'")
	if msg := g.badHost(r); msg != "" {
		refuse(w, r, http.StatusForbidden, msg)
		return
	}
	if msg := g.badOrigin(r); msg != "" {
		refuse(w, r, http.StatusForbidden, msg)
		return
	}
	page := (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		(isPagePath(r.URL.Path) || r.URL.Path == "/favicon.ico")
	if page && (r.URL.Path == "/" || r.URL.Path == "/index.html") && r.URL.Query().Has("token") {
		g.exchange(w, r)
		return
	}
	if !page {
		if code, msg := g.badToken(r); code != 0 {
			refuse(w, r, code, msg)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// exchange trades the token in the page's address for the cookie, then
// sends the browser to the same address without it.
func (g *guard) exchange(w http.ResponseWriter, r *http.Request) {
	if !g.equal(r.URL.Query().Get("token")) {
		refuse(w, r, http.StatusForbidden, "the token in this address is not this workbench's: open the address `sluice ui` printed when it started")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: string(g.token), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	q := r.URL.Query()
	q.Del("token")
	to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
}

// equal compares got with the token in constant time.
func (g *guard) equal(got string) bool {
	return len(g.token) > 0 && subtle.ConstantTimeCompare([]byte(got), g.token) == 1
}

// badToken checks the token an API request sends, as the cookie, as
// "Authorization: Bearer TOKEN" or as ?token=TOKEN; it answers the status
// and sentence of a refusal, or 0.
func (g *guard) badToken(r *http.Request) (int, string) {
	var sent []string
	if c, err := r.Cookie(g.cookie); err == nil {
		sent = append(sent, c.Value)
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		sent = append(sent, strings.TrimPrefix(a, "Bearer "))
	}
	if r.URL.Query().Has("token") {
		sent = append(sent, r.URL.Query().Get("token"))
	}
	if len(sent) == 0 {
		return http.StatusUnauthorized, "expected the workbench's token, found none: open the address `sluice ui` printed (http://HOST:PORT/?token=…), or send \"Authorization: Bearer TOKEN\""
	}
	for _, s := range sent {
		if g.equal(s) {
			return 0, ""
		}
	}
	return http.StatusUnauthorized, "expected the workbench's token, found a wrong one: open the address `sluice ui` printed (http://HOST:PORT/?token=…), or send \"Authorization: Bearer TOKEN\""
}

// badOrigin refuses a request a page of another origin makes: a non-safe
// one by http.CrossOriginProtection, any API read by Sec-Fetch-Site or
// Origin. It answers the refusal's sentence, or "".
func (g *guard) badOrigin(r *http.Request) string {
	const fix = "the workbench answers only its own page: open the address `sluice ui` printed"
	if err := g.cop.Check(r); err != nil {
		return "cross-origin request refused (" + r.Method + " from another site or port); " + fix
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		if !isPagePath(r.URL.Path) && r.URL.Path != "/favicon.ico" {
			return "cross-origin request refused (Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + "); " + fix
		}
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if u, err := url.Parse(o); err != nil || u.Host != r.Host {
			return "cross-origin request refused (Origin is not this workbench's address); " + fix
		}
	} else if o == "null" {
		return "cross-origin request refused (Origin: null, an opaque origin); " + fix
	}
	return ""
}

// badHost refuses a Host header that does not name this server: the
// address the connection came in on, 127.0.0.1, localhost or [::1] (or a
// name given by AllowHosts), with the server's port. A name that resolves
// here by DNS rebinding is refused. It answers the sentence, or "".
func (g *guard) badHost(r *http.Request) string {
	const fix = "; open the workbench as http://127.0.0.1:PORT/ or http://localhost:PORT/ (or start `sluice ui` with --allow-host NAME)"
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return "expected a Host header naming the workbench, found none" + fix
	}
	var local *net.TCPAddr
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		local, _ = a.(*net.TCPAddr)
	}
	if local != nil && port != strconv.Itoa(local.Port) {
		return "Host " + quoteHost(r.Host) + " is not this workbench's address (its port differs)" + fix
	}
	switch host {
	case "127.0.0.1", "localhost", "::1":
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && local != nil && ip.Equal(local.IP) && !ip.IsUnspecified() {
		return ""
	}
	for _, h := range g.allowHosts {
		if host == h {
			return ""
		}
	}
	return "Host " + quoteHost(r.Host) + " is not this workbench's address (a page reaching it through another name is refused)" + fix
}

// quoteHost is the Host header for a message: quoted and cut short.
func quoteHost(h string) string {
	if len(h) > 80 {
		h = h[:80] + "…"
	}
	return `"` + strings.ToValidUTF8(h, "?") + `"`
}

// refuse answers a refusal: JSON ({"errors": [msg]}) for the API, plain
// text for the page.
func refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeErr(w, code, msg)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}
