// Package ui serves sluice's workbench API over HTTP: the graph of a file as
// JSON, `sluice check` of any YAML the client sends, edits, saves and runs.
// Every API request needs the server's token, no request may come from a
// page of another origin or through a Host that is not the server's, and
// every path a graph names must lie inside the server's file root. See
// docs/ui.md for the API and docs/security.md for the threat model.
package ui

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
)

// MaxBody is the largest request body the API reads, in bytes.
const MaxBody = 1 << 20

// Server answers the API for one graph file (File may be empty: then only
// POST /api/check works). Every API request must send Token: as the cookie
// the page gets from the address http://HOST:PORT/?token=TOKEN, as
// "Authorization: Bearer TOKEN" or as ?token=TOKEN. Set the fields before
// calling Handler.
type Server struct {
	File string
	// Token is the server's secret; Handler makes a random one when it is
	// empty (read it back after Handler returns).
	Token string
	// Root confines every path a graph names (composite graph files,
	// kernel sources, flow models, Go package directories, the paths
	// actors open in runs from the page); nil: the directory of File, or
	// the working directory without one.
	Root *fsroot.Root
	// AllowHosts are more names (besides the listening address, 127.0.0.1,
	// localhost and [::1]) that the Host header of a request may give, for
	// a listener reached by a host name.
	AllowHosts []string
	// Check tunes the analyses; the zero value is `sluice check`'s default.
	Check analysis.CheckOptions
	// Live, when set, is the running graph's progress served on GET /api/run.
	Live *Live
	// Metrics, when set, is served on GET /metrics.
	Metrics http.Handler
	// Cluster, when set, is the broker tree served on GET /api/cluster.
	Cluster Cluster
	// Saved, when set, is shown as the last run (see LoadSavedRun).
	Saved *SavedRun

	// Mapping, when set, places the graph's actors: the answers of GET
	// /api/graph, POST /api/check and POST /api/save then carry each mapped
	// actor's device and replicas, which the page shows.
	Mapping *graph.Mapping
	// Machine is the model predictions use (nil: this host's calibrated
	// one, else its CPU cores).
	Machine *driver.Machine
	// TraceLimit is the most events the trace of a run started on the
	// page keeps (0: RunTraceLimit; < 0: every one); the server holds the
	// last one's.
	TraceLimit int64

	ctl   runControl // POST /api/run/start's state; see runctl.go
	mapMu sync.Mutex // guards Mapping once the handler serves (POST /api/mapping)

	root      *fsroot.Root // Root, or the one Handler opened
	rootErr   error        // why the default root could not be opened (every graph is then refused)
	cwd       string       // the working directory, which actors' relative paths start from
	tokenMade bool         // Token was made by Handler
}

// CheckResult is the answer of GET /api/graph and POST /api/check: the
// YAML, its graph (nil when it does not parse) and check's report.
type CheckResult struct {
	YAML   string           `json:"yaml,omitempty"`
	Graph  *GraphJSON       `json:"graph"`
	Report *analysis.Report `json:"report"`
	// Mapping gives, by actor name, the device and replicas of the actors
	// that Server.Mapping places (absent without a mapping).
	Mapping map[string]PlacementJSON `json:"mapping,omitempty"`
}

// PlacementJSON is where the mapping puts one actor.
type PlacementJSON struct {
	Device   string `json:"device,omitempty"`
	Replicas int    `json:"replicas,omitempty"`
}

// placements encodes m's placements of g's actors (nil without m).
func placements(m *graph.Mapping, g *graph.Graph) map[string]PlacementJSON {
	if m == nil {
		return nil
	}
	out := map[string]PlacementJSON{}
	for _, a := range g.Actors {
		if p := m.Actors[a.Name]; p != nil {
			out[a.Name] = PlacementJSON{Device: p.Device, Replicas: p.Replicas}
		}
	}
	return out
}

// errorJSON is every error answer: one line per problem, each with its
// file:line:col when known.
type errorJSON struct {
	Errors []string `json:"errors"`
	// YAML and Graph, for YAML that does not make a valid graph: the text
	// and what of the graph it draws (see sketch), so the editor still
	// shows an actor whose ports are not connected yet.
	YAML  string     `json:"yaml,omitempty"`
	Graph *GraphJSON `json:"graph,omitempty"`
}

// Handler returns the API's HTTP handler, guarded (see guard.go): it makes
// the token when Token is empty and opens the default root.
func (s *Server) Handler() http.Handler {
	if s.Token == "" {
		s.Token, s.tokenMade = NewToken(), true
	}
	s.cwd, _ = os.Getwd()
	s.root, s.rootErr = s.Root, nil
	if s.root == nil {
		dir := "."
		if s.File != "" {
			dir = filepath.Dir(s.File)
		}
		s.root, s.rootErr = fsroot.Open(dir)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/graph", s.getGraph)
	mux.HandleFunc("POST /api/check", s.postCheck)
	mux.HandleFunc("GET /api/run", s.getRun)
	mux.HandleFunc("GET /api/run/events", s.getRunEvents)
	mux.HandleFunc("GET /api/cluster", s.getCluster)
	mux.HandleFunc("POST /api/save", s.confined("yaml", s.postSave))
	mux.HandleFunc("POST /api/edit", s.confined("edit", s.postEdit))
	mux.HandleFunc("POST /api/mapping", s.postMapping)
	mux.HandleFunc("POST /api/mapping/save", s.postMappingSave)
	mux.HandleFunc("POST /api/gogen", s.confined("yaml", s.postGoGen))
	mux.HandleFunc("GET /api/builtins", s.getBuiltins)
	mux.HandleFunc("GET /api/run/compare", s.getRunCompare)
	if s.File != "" && s.Live == nil {
		s.Live = &Live{} // fed by POST /api/run/start
	}
	s.showSaved()
	mux.HandleFunc("POST /api/run/start", s.confined("run", s.postRunStart))
	mux.HandleFunc("POST /api/run/stop", s.postRunStop)
	mux.HandleFunc("GET /api/run/state", s.getRunState)
	mux.HandleFunc("GET /api/run/trace", s.getRunTrace)
	if s.Metrics != nil {
		mux.Handle("GET /metrics", s.Metrics)
	}
	return newGuard(s, pageOr(mux), s.tokenMade)
}

func (s *Server) getGraph(w http.ResponseWriter, r *http.Request) {
	if s.File == "" {
		writeErr(w, http.StatusNotFound, "no graph file: start `sluice ui FILE` or POST YAML to /api/check")
		return
	}
	data, err := os.ReadFile(s.File)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.answer(w, s.File, data)
}

func (s *Server) postCheck(w http.ResponseWriter, r *http.Request) {
	data, ok := readYAMLBody(w, r)
	if !ok {
		return
	}
	name := s.File
	if name == "" {
		name = "editor.yaml"
	}
	s.answer(w, name, data)
}

// readYAMLBody reads a request body of at most MaxBody bytes that is not
// empty, or writes the error answer and reports false.
func readYAMLBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	return readBodyOf(w, r, "a YAML graph")
}

// readBody is readYAMLBody for a JSON body.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	return readBodyOf(w, r, "a JSON object")
}

func readBodyOf(w http.ResponseWriter, r *http.Request, what string) ([]byte, bool) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body: expected at most %d bytes, found more", MaxBody))
		return nil, false
	case err != nil:
		writeErr(w, http.StatusBadRequest, "body: "+err.Error())
		return nil, false
	case len(strings.TrimSpace(string(data))) == 0:
		writeErr(w, http.StatusBadRequest, "body: expected "+what+", found an empty body")
		return nil, false
	}
	return data, true
}

// answer parses data as the YAML graph file name and writes its graph and
// check report, or 422 with every problem found and its position.
func (s *Server) answer(w http.ResponseWriter, name string, data []byte) {
	g, err := s.loadForPage(name, data)
	var re *refusedError
	if errors.As(err, &re) {
		writeJSON(w, http.StatusUnprocessableEntity, errorJSON{Errors: re.Lines, YAML: string(data), Graph: sketch(data)})
		return
	}
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, errorJSON{Errors: graph.ErrorLines(err), YAML: string(data), Graph: sketch(data)})
		return
	}
	writeJSON(w, http.StatusOK, CheckResult{YAML: string(data), Graph: EncodeGraph(g), Report: s.report(g),
		Mapping: placements(s.currentMapping(), g)})
}

func writeErr(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorJSON{Errors: []string{msg}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// NewToken returns a random 128-bit token in hex.
func NewToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (it crashes the program instead)
	return hex.EncodeToString(b)
}
