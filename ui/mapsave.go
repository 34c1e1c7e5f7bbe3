package ui

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/mapping"
	"github.com/sluicehq/sluice/spec"
	"go.yaml.in/yaml/v3"
)

// MappingSavedJSON is the answer of POST /api/mapping/save: the file
// written and its YAML.
type MappingSavedJSON struct {
	Path string `json:"path"`
	YAML string `json:"yaml"`
}

// mappingPath is where POST /api/mapping/save writes: the YAML file the
// mapping was loaded from (--mapping), else FILE's name with "-map.yaml"
// for its extension; "" when there is neither.
func (s *Server) mappingPath() string {
	s.mapMu.Lock()
	m := s.Mapping
	s.mapMu.Unlock()
	if m != nil && m.Origin != "" && !strings.EqualFold(filepath.Ext(m.Origin), ".xml") {
		if st, err := os.Stat(m.Origin); err == nil && st.Mode().IsRegular() {
			return m.Origin
		}
	}
	if s.File == "" {
		return ""
	}
	return strings.TrimSuffix(s.File, filepath.Ext(s.File)) + "-map.yaml"
}

// postMappingSave writes the server's mapping (as POST /api/mapping edited
// it) to its file: each mapped actor's device and replicas set in place,
// the file's other keys and comments kept, actors no longer placed
// removed. The result must parse as a mapping (`sluice run --mapping`
// accepts it unchanged).
func (s *Server) postMappingSave(w http.ResponseWriter, r *http.Request) {
	path := s.mappingPath()
	if path == "" {
		writeErr(w, http.StatusNotFound, "no mapping file to save to: start `sluice ui FILE` (the mapping goes to FILE-map.yaml) or give --mapping")
		return
	}
	m := s.currentMapping()
	if m == nil {
		writeErr(w, http.StatusNotFound, "no mapping to save: place an actor first (POST /api/mapping)")
		return
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		writeErr(w, http.StatusInternalServerError, "save mapping: "+err.Error())
		return
	}
	var data []byte
	if len(strings.TrimSpace(string(old))) == 0 {
		var b bytes.Buffer
		err = mapping.WriteMapping(&b, m, "")
		data = b.Bytes()
	} else {
		data, err = mappingYAML(old, m)
	}
	if err != nil {
		writeErr(w, http.StatusUnprocessableEntity, path+": "+err.Error())
		return
	}
	if _, err := spec.ParseMapping(path, data); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, errorJSON{Errors: graph.ErrorLines(err)})
		return
	}
	if err := writeFileAtomic(path, data); err != nil {
		writeErr(w, http.StatusInternalServerError, "save mapping: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, MappingSavedJSON{Path: path, YAML: string(data)})
}

// mappingYAML returns the mapping file data with the device and replicas
// of every actor m places set as m has them, actors that m no longer
// places removed, and everything else as written. (A new file is written
// by mapping.WriteMapping.)
func mappingYAML(data []byte, m *graph.Mapping) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errors.New("the mapping file does not parse as YAML: " + err.Error())
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("expected a YAML mapping (name, mapping) at the top, found something else")
	}
	d := &yamlDoc{doc: doc, root: doc.Content[0]}
	sec, err := d.section("mapping", yaml.MappingNode)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(sec.Content); {
		if _, ok := m.Actors[sec.Content[i].Value]; ok {
			i += 2
			continue
		}
		sec.Content = append(sec.Content[:i], sec.Content[i+2:]...)
	}
	names := make([]string, 0, len(m.Actors))
	for a := range m.Actors {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		p := m.Actors[a]
		n := mapGet(sec, a)
		if n == nil || n.Kind != yaml.MappingNode {
			n = flowMap()
			mapSet(sec, a, n)
		}
		if p.Device != "" {
			mapSet(n, "device", scalar(p.Device))
		} else {
			mapDelete(n, "device")
		}
		if p.Replicas > 1 {
			mapSet(n, "replicas", scalar(strconv.Itoa(p.Replicas)))
		} else {
			mapDelete(n, "replicas")
		}
	}
	return d.bytes()
}
