package spec

import (
	"context"
	"math"
	"path/filepath"

	"github.com/sluicehq/sluice/internal/yamlpos"
)

// Limits that keep malformed or hostile input from exhausting memory; the
// YAML node budget (alias bombs), nesting of values and merges, and the
// number of errors kept are yamlpos.DefaultLimits.
const (
	maxGraphs      = 1024 // composite bodies (inline or by file) in one load
	maxRate        = math.MaxInt32
	maxPhases      = 1 << 16
	maxTokenSize   = 1 << 30 // bytes in one token
	maxInitialData = 16 << 20
	maxFileSize    = 16 << 20
	maxDepth       = 16 // nested composite graph files
)

// state is shared by a spec file and the files it includes.
type state struct {
	*yamlpos.Session                 // errors, node budget, nesting depth
	quiet            map[string]bool // origin+"|class" of validation problems already explained
	loading          []string        // composite graph files being read (cycle check)
	graphs           int             // graphs read so far
	gdepth           int             // current nesting of graphs
	ctx              context.Context // bounds flow-model fetches (nil: Background)
	opts             Options         // the load's file root and resolvers
}

func newState() *state { return &state{Session: yamlpos.NewSession(), quiet: map[string]bool{}} }

// yp reads the nodes of one file.
type yp struct {
	*yamlpos.Reader
	st  *state
	dir string // directory relative paths are resolved against
}

// reader reads file, resolving relative paths against its directory.
func (st *state) reader(file string) *yp {
	return &yp{Reader: &yamlpos.Reader{Session: st.Session, File: file}, st: st, dir: filepath.Dir(file)}
}
