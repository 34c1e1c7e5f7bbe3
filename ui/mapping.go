package ui

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/gogen"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// currentMapping is a copy of the server's mapping (nil without one).
func (s *Server) currentMapping() *graph.Mapping {
	s.mapMu.Lock()
	defer s.mapMu.Unlock()
	return s.Mapping.Clone()
}

// MappingEditJSON is the body of POST /api/mapping: where one actor runs.
// An empty Device with Replicas 0 removes the actor's placement.
type MappingEditJSON struct {
	Actor    string `json:"actor"`
	Device   string `json:"device"`
	Replicas int    `json:"replicas"`
}

// postMapping places one actor (device, replicas) in the server's mapping,
// which the graph's answers show and runs from the page use; it answers
// every placement, {"mapping": {actor: {device, replicas}}}.
func (s *Server) postMapping(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var e MappingEditJSON
	if err := json.Unmarshal(body, &e); err != nil || !validName(strings.ReplaceAll(e.Actor, ".", "_")) {
		writeErr(w, http.StatusBadRequest, "body: expected JSON {\"actor\": NAME, \"device\": …, \"replicas\": N}, found "+string(body))
		return
	}
	if e.Replicas < 0 {
		writeErr(w, http.StatusBadRequest, "replicas: expected 0 or more, found a negative number")
		return
	}
	s.mapMu.Lock()
	if s.Mapping == nil {
		s.Mapping = &graph.Mapping{Name: "ui", Actors: map[string]*graph.Placement{}}
	}
	if e.Device == "" && e.Replicas == 0 {
		delete(s.Mapping.Actors, e.Actor)
	} else {
		p := s.Mapping.Actors[e.Actor]
		if p == nil {
			p = &graph.Placement{}
			s.Mapping.Actors[e.Actor] = p
		}
		p.Device, p.Replicas = e.Device, e.Replicas
	}
	out := map[string]PlacementJSON{}
	for k, p := range s.Mapping.Actors {
		out[k] = PlacementJSON{Device: p.Device, Replicas: p.Replicas}
	}
	s.mapMu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"mapping": out})
}

// GoJSON is the answer of POST /api/gogen.
type GoJSON struct {
	Go string `json:"go"`
}

// postGoGen answers the Go program equivalent to the YAML graph sent,
// placed by the server's mapping (package gogen).
func (s *Server) postGoGen(w http.ResponseWriter, r *http.Request) {
	data, ok := readYAMLBody(w, r)
	if !ok {
		return
	}
	g, err := s.parse(s.editorName(), data)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, errorJSON{Errors: graph.ErrorLines(err)})
		return
	}
	src, err := gogen.Generate(g, s.currentMapping(), gogen.Options{Source: filepath.Base(s.editorName())})
	if err != nil {
		writeErr(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, GoJSON{Go: string(src)})
}

// BuiltinJSON is one built-in actor of GET /api/builtins.
type BuiltinJSON struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

// getBuiltins lists the built-in actors registered in this program, for
// the page's palette.
func (s *Server) getBuiltins(w http.ResponseWriter, r *http.Request) {
	out := []BuiltinJSON{}
	for _, b := range runtime.Builtins() {
		out = append(out, BuiltinJSON{Name: b.Name, Doc: b.Doc})
	}
	writeJSON(w, http.StatusOK, out)
}
