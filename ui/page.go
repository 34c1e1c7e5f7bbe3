package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// dist is the built page (ui/web bundled by ui/web/build.sh).
//
//go:embed dist
var dist embed.FS

// pageOr serves the page's files (index.html, app.js, style.css) at / and
// every other path through api. The page's files hold no data, so they are
// served without the token; the page sends the token given in its URL.
func pageOr(api http.Handler) http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded at build time: it exists
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/favicon.ico" {
			r.URL.Path = "/favicon.svg" // browsers ask for it whatever the page links
		}
		if r.Method == http.MethodGet && isPagePath(r.URL.Path) {
			files.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

func isPagePath(p string) bool {
	switch p {
	case "/", "/index.html", "/app.js", "/app.css", "/style.css", "/favicon.svg":
		return true
	}
	return false
}

// postSave writes the body back to the graph file once it parses as a
// graph; YAML that does not parse answers 422 with file:line:col and the
// file is left as it was.
func (s *Server) postSave(w http.ResponseWriter, r *http.Request) {
	if s.File == "" {
		writeErr(w, http.StatusNotFound, "no graph file to save to: start `sluice ui FILE`")
		return
	}
	data, ok := readYAMLBody(w, r)
	if !ok {
		return
	}
	if _, err := s.parse(s.File, data); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, errorJSON{Errors: graph.ErrorLines(err)})
		return
	}
	if err := writeFileAtomic(s.File, data); err != nil {
		writeErr(w, http.StatusInternalServerError, "save: "+err.Error())
		return
	}
	s.answer(w, s.File, data)
}

// writeFileAtomic replaces name with data through a temporary file in the
// same directory, keeping name's permissions.
func writeFileAtomic(name string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(name); err == nil {
		mode = st.Mode().Perm()
	}
	dir := "."
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		dir = name[:i+1]
	}
	f, err := os.CreateTemp(dir, ".sluice-save-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
