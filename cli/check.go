package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/internal/namelist"
)

func newCheck() *cobra.Command {
	var asJSON bool
	var mappingFile, graphFile string
	var x structureFlags
	var budget time.Duration
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Validate any sluice file; analyse a graph: rates, deadlock, buffer sizes, throughput",
		Long: `check loads a graph file (YAML, or ETH XML) and reports whether it is valid, whether
its rates are consistent (with the repetition vector), whether one iteration deadlocks
(naming the blocked cycles and the channels that need initial tokens), the minimal
deadlock-free buffer sizes, and the throughput bound when actors have costs.
It exits with status 1 when the graph is invalid, inconsistent or deadlocks.

Given any other file sluice reads (a mapping, a flow-model, a machine model, a
shell executable or batch, a cost file, a profile), check validates it with that
kind's reader and says which command takes it. A file's kind is its top-level
kind: key, or else what its keys show.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := driver.Kind(args[0])
			if err != nil {
				return err
			}
			if k == filekind.Mapping && graphFile != "" {
				return checkMapping(cmd, args[0], graphFile)
			}
			if graphFile != "" {
				return usageError{fmt.Errorf("--graph %s: checks a mapping against a graph, but %s is %s", graphFile, args[0], k.What())}
			}
			if k != filekind.Graph && k != filekind.Unknown {
				if mappingFile != "" {
					return usageError{fmt.Errorf("--mapping %s: expected FILE to be a graph, but %s is %s", mappingFile, args[0], k.What())}
				}
				return checkOther(cmd.Context(), cmd.OutOrStdout(), args[0], k)
			}
			lo := loadOptions(cmd)
			rep, order := checkFile(args[0], mappingFile, lo, analysis.CheckOptions{ThroughputBudget: budget})
			out := cmd.OutOrStdout()
			if rep.Valid && rep.Consistent && (x.unfold > 0 || x.peast != "") {
				s, err := structure(args[0], lo, x)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, struct {
						*analysis.Report
						Structure *structureReport `json:"structure"`
					}{rep, s})
				}
				writeReport(out, args[0], rep, order)
				writePipeline(out, rep.Pipeline)
				s.write(out)
				return checkStatus(rep)
			}
			if asJSON {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			} else {
				writeReport(out, args[0], rep, order)
				writePipeline(out, rep.Pipeline)
				if g, err := loadGraph(args[0], lo); err == nil {
					if why := driver.Open(g); why != "" {
						fmt.Fprintf(out, "• %s\n", why)
					}
				}
			}
			return checkStatus(rep)
		},
	}
	cmd.Flags().DurationVar(&budget, "budget", analysis.DefaultThroughputBudget, "time allowed for the throughput-optimal buffer search (negative, e.g. -1s: no limit)")
	cmd.Flags().IntVar(&x.unfold, "unfold", 0, "also expand to single rate (HSDF) with this unfolding factor J: size, critical path, stages")
	cmd.Flags().StringVar(&x.peast, "peast", "", "also print Caravela's PEA-ST startup/repeat stage matrix from this root actor (\"all\": best root)")
	cmd.Flags().IntVar(&x.limit, "limit", analysis.DefaultExpandLimit, "largest single-rate expansion (vertices) --unfold may build")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object instead of the readable report")
	cmd.Flags().StringVar(&mappingFile, "mapping", "", "also check a mapping file (YAML or ETH XML) against the graph")
	cmd.Flags().StringVar(&graphFile, "graph", "", "FILE is a mapping: check it against this graph and this host, as sluice run GRAPH --mapping FILE would take it")
	return cmd
}

// checkMapping checks a mapping file against its graph as sluice run
// would take it here: the driver's Load, Prepare and Place (the mapping's
// machine, its actors and devices against the graph's).
func checkMapping(cmd *cobra.Command, mappingFile, graphFile string) error {
	out, ctx := cmd.OutOrStdout(), cmd.Context()
	fail := func(err error) error {
		fmt.Fprintf(out, "mapping %s for graph %s\n✗ invalid\n", mappingFile, graphFile)
		for _, l := range graph.ErrorLines(err) {
			fmt.Fprintf(out, "  %s\n", l)
		}
		return exitError{1}
	}
	m, err := loadMapping(mappingFile)
	if err != nil {
		return fail(err)
	}
	l, err := driver.Load(ctx, graphFile, loadOptions(cmd))
	if err != nil {
		return fail(err)
	}
	p, err := driver.Prepare(ctx, l, driver.PrepareOptions{NoCheck: true})
	if err != nil {
		return fail(err)
	}
	if _, err := driver.Place(ctx, p, driver.PlaceOptions{Mapping: m}); err != nil {
		return fail(err)
	}
	fmt.Fprintf(out, "mapping %s for graph %s: ✓ valid (%d actor(s) placed; sluice run %s --mapping %s takes it on this host)\n",
		mappingFile, graphFile, len(m.Actors), graphFile, mappingFile)
	return nil
}

// checkFile loads and analyses a graph; load errors become an invalid
// report. It also returns the actors' names in declaration order.
func checkFile(path, mappingFile string, lo driver.Options, opts analysis.CheckOptions) (*analysis.Report, []string) {
	l, err := driver.Load(context.Background(), path, lo)
	if err != nil {
		return &analysis.Report{Graph: path, Valid: false, Errors: graph.ErrorLines(err),
			Repetitions: map[string]int64{}, Buffers: map[string]int{}}, nil
	}
	g, pl := l.Analysed(), l.Pipeline // initonce ports' channels hold the application's init tokens
	var order []string
	if f, err := g.Flatten(); err == nil {
		for _, a := range f.Actors {
			order = append(order, a.Name)
		}
	}
	rep := analysis.Check(g, opts)
	if pl != nil {
		rep.Pipeline = analysis.CheckPipeline(pl)
	}
	if mappingFile != "" && rep.Valid {
		m, err := loadMapping(mappingFile)
		if err == nil {
			err = m.Check(g)
		}
		if err != nil {
			rep.Valid = false
			rep.Errors = append(rep.Errors, graph.ErrorLines(err)...)
		}
	}
	return rep, order
}

func writeReport(w io.Writer, file string, r *analysis.Report, order []string) {
	name := r.Graph
	if name == "" || name == file {
		name = file
	} else {
		name = fmt.Sprintf("%s (%s)", name, file)
	}
	fmt.Fprintf(w, "graph %s\n", name)
	if !r.Valid {
		fmt.Fprintf(w, "✗ invalid: %d problem(s)\n", len(r.Errors))
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  %s\n", e)
		}
		return
	}
	fmt.Fprintln(w, "✓ valid")
	if !r.Consistent {
		fmt.Fprintln(w, "✗ inconsistent rates")
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  %s\n", e)
		}
		return
	}
	fmt.Fprintf(w, "✓ consistent rates; repetition vector (firings per iteration):\n")
	writeCounts(w, order, r.Repetitions)
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "  not analysed (KPN processes with dynamic rates): %s\n", namelist.Join(r.Skipped, 12, ", "))
	}
	if r.Deadlock {
		fmt.Fprintln(w, "✗ deadlock: one iteration cannot complete")
		for _, cy := range r.Cycles {
			fmt.Fprintf(w, "  blocked cycle: %s\n", strings.Join(cy, " ⇒ "))
		}
		for _, b := range r.Blocked {
			fmt.Fprintf(w, "  %s\n", b)
		}
		if len(r.Initialize) > 0 {
			fmt.Fprintln(w, "  to remove it, add initial tokens:")
			for _, k := range sortedKeys(r.Initialize) {
				fmt.Fprintf(w, "    %-30s +%d\n", k, r.Initialize[k])
			}
		}
		if len(r.Enlarge) > 0 {
			fmt.Fprintln(w, "  to remove it, enlarge these channels to (tokens):")
			for _, k := range sortedKeys(r.Enlarge) {
				fmt.Fprintf(w, "    %-30s %d\n", k, r.Enlarge[k])
			}
		}
	} else {
		fmt.Fprintln(w, "✓ no deadlock")
	}
	if len(r.Buffers) > 0 {
		fmt.Fprintln(w, "minimal deadlock-free capacities (tokens):")
		writeCapacities(w, r.Buffers, r.ThroughputBuffers)
	}
	if r.PeriodNS > 0 {
		fmt.Fprintf(w, "throughput bound: one iteration every %s (%.4g iterations/s)\n", fmtNS(r.PeriodNS), r.IterationsPerSecond)
		if len(r.Critical) > 0 {
			fmt.Fprintf(w, "  set by: %s\n", namelist.Join(r.Critical, 12, ", "))
		}
	}
	if len(r.Schedule) > 0 {
		parts := make([]string, len(r.Schedule))
		for i, l := range r.Schedule {
			parts[i] = l.String()
		}
		fmt.Fprintf(w, "single-processor schedule of one iteration: %s\n", namelist.Join(parts, 24, " "))
	}
	writeBranches(w, r.Branches)
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
}

func writeCounts(w io.Writer, order []string, m map[string]int64) {
	if len(order) == 0 {
		for k := range m {
			order = append(order, k)
		}
		sort.Strings(order)
	}
	var keys []string
	for _, k := range order {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	// Actors of one count are folded when eight or more share it, as the
	// workbench's findings fold them: "=1 for all 256 actors (a000 … a255)".
	var parts []string
	foldAlike(keys, func(k string) int64 { return m[k] },
		func(k string, v int64) { parts = append(parts, fmt.Sprintf("%s=%d", k, v)) },
		func(v int64, names []string, all string) {
			parts = append(parts, fmt.Sprintf("=%d for %s%d actors (%s … %s)", v, all, len(names), names[0], names[len(names)-1]))
		})
	// Wrap at about 100 columns.
	line := " "
	for _, p := range parts {
		if len(line)+len(p) > 100 {
			fmt.Fprintln(w, line)
			line = " "
		}
		line += " " + p
	}
	fmt.Fprintln(w, line)
}

// writeCapacities lists each channel's minimal deadlock-free capacity
// and, where the throughput search found one, its capacity for maximal
// throughput. Eight or more channels with the same two figures are
// folded into one line, as writeCounts folds actors: "=1 for all 4999
// channels (a0.y->a1.x … a999.y->a1000.x)".
func writeCapacities(w io.Writer, minimal, forThroughput map[string]int) {
	type figures struct {
		min, max int
		has      bool
	}
	text := func(f figures, gap string) string {
		if f.has {
			return fmt.Sprintf("%d%s(for maximal throughput: %d)", f.min, gap, f.max)
		}
		return fmt.Sprint(f.min)
	}
	foldAlike(sortedKeys(minimal),
		func(k string) figures {
			t, ok := forThroughput[k]
			return figures{minimal[k], t, ok}
		},
		func(k string, f figures) { fmt.Fprintf(w, "  %-30s %s\n", k, text(f, "   ")) },
		func(f figures, names []string, all string) {
			fmt.Fprintf(w, "  =%s for %s%d channels (%s … %s)\n", text(f, " "), all, len(names), names[0], names[len(names)-1])
		})
}

// foldAlike walks keys in order: a key whose value fewer than eight keys
// share goes to one; the eight or more keys sharing a value go to group
// once, where the first of them stands, with all set to "all " when every
// key shares that value.
func foldAlike[V comparable](keys []string, value func(string) V, one func(string, V), group func(v V, names []string, all string)) {
	byValue := map[V][]string{}
	for _, k := range keys {
		v := value(k)
		byValue[v] = append(byValue[v], k)
	}
	all := ""
	if len(byValue) == 1 {
		all = "all "
	}
	folded := map[V]bool{}
	for _, k := range keys {
		v := value(k)
		switch names := byValue[v]; {
		case len(names) < 8:
			one(k, v)
		case !folded[v]:
			folded[v] = true
			group(v, names, all)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func fmtNS(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

// checkStatus is check's exit status: 1 for an invalid, inconsistent or
// deadlocking graph.
func checkStatus(r *analysis.Report) error {
	if !r.Valid || !r.Consistent || r.Deadlock {
		return exitError{1}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

type structureFlags struct {
	unfold int
	limit  int
	peast  string
}

// structureReport is the optional part of check: the single-rate expansion
// and the PEA-ST stage matrix.
type structureReport struct {
	Unfold       int                   `json:"unfold,omitempty"`
	Vertices     int                   `json:"hsdf_vertices,omitempty"`
	Edges        int                   `json:"hsdf_edges,omitempty"`
	CriticalNS   int64                 `json:"critical_path_ns,omitempty"`
	CriticalUnit bool                  `json:"critical_path_in_firings,omitempty"`
	Critical     []string              `json:"critical_path,omitempty"`
	Stages       [][]string            `json:"stages,omitempty"`
	PEAST        *analysis.StageMatrix `json:"peast,omitempty"`
}

func structure(path string, lo driver.Options, x structureFlags) (*structureReport, error) {
	g, err := loadGraph(path, lo)
	if err != nil {
		return nil, err
	}
	rv, err := analysis.RepetitionVector(g)
	if err != nil {
		return nil, err
	}
	s := &structureReport{}
	if x.unfold > 0 {
		h, err := analysis.Expand(g, rv, x.unfold, x.limit)
		if err != nil {
			return nil, err
		}
		s.Unfold, s.Vertices, s.Edges, s.CriticalUnit = h.J, len(h.Vertices), len(h.Edges), h.Unit
		p, err := h.CriticalPath()
		if err != nil {
			return nil, err
		}
		s.CriticalNS = int64(p.Length)
		for _, v := range p.Vertices {
			s.Critical = append(s.Critical, fmt.Sprintf("%s#%d", v.Actor, v.Firing))
		}
		for _, st := range h.Stages() {
			var names []string
			for _, v := range st {
				names = append(names, fmt.Sprintf("%s#%d", v.Actor, v.Firing))
			}
			s.Stages = append(s.Stages, names)
		}
	}
	if x.peast != "" {
		root := x.peast
		if root == "all" {
			root = ""
		}
		if s.PEAST, err = analysis.PEAST(g, rv, root); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *structureReport) write(w io.Writer) {
	if s.Unfold > 0 {
		fmt.Fprintf(w, "single-rate expansion (J=%d): %d firings, %d edges\n", s.Unfold, s.Vertices, s.Edges)
		length := fmtNS(float64(s.CriticalNS))
		if s.CriticalUnit {
			length = fmt.Sprintf("%d firings", len(s.Critical))
		}
		fmt.Fprintf(w, "  critical path (%s): %s\n", length, namelist.Join(s.Critical, 12, " → "))
		fmt.Fprintf(w, "  %d stages (levels of firings that may run at once):\n", len(s.Stages))
		for i, st := range s.Stages {
			if i == 8 {
				fmt.Fprintf(w, "    ... %d more\n", len(s.Stages)-i)
				break
			}
			fmt.Fprintf(w, "    %d: %s\n", i, namelist.Join(st, 10, ", "))
		}
	}
	if m := s.PEAST; m != nil {
		fmt.Fprintf(w, "PEA-ST from root %s: %d stages, shift %d, max parallelism %d\n", m.Root, m.Stages, m.Shift, m.MaxParallelism)
		if len(m.Retreating) > 0 {
			fmt.Fprintf(w, "  feedback channels: %s\n", namelist.Join(m.Retreating, 12, ", "))
		}
		fmt.Fprintf(w, "  startup: %s\n", stageRows(m.Startup))
		fmt.Fprintf(w, "  repeat:  %s\n", stageRows(m.Repeat))
	}
}

func stageRows(rows [][]string) string {
	var parts []string
	for _, r := range rows {
		parts = append(parts, "("+strings.Join(r, ",")+")")
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, " ")
}
