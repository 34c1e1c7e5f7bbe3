package analysis

import (
	"fmt"
	"sort"

	"github.com/sluicehq/sluice/graph"
)

// PipelineReport is the pipeline-model part of `sluice check`: whether the
// three pipeline-model conditions hold (at least one exit port, at least one
// stage, connected), the ports of each role, the initonce ports the
// pipeline still needs, and the application-side rates of ports with
// iteration limits.
type PipelineReport struct {
	// Valid is true when the pipeline-model conditions and roles hold.
	Valid bool `json:"valid"`
	// Errors says, for each broken condition or role, what was expected
	// and what was found.
	Errors []string `json:"errors,omitempty"`
	// Entrance, Exit and InitOnce name the ports of each role ("actor.port").
	Entrance []string `json:"entrance"`
	Exit     []string `json:"exit"`
	InitOnce []string `json:"initonce,omitempty"`
	// NeedInitOnce names the input ports of channels that must hold
	// initial tokens for one iteration to complete (see Deadlock's
	// Initialize) and are not initonce ports yet, with the tokens needed.
	NeedInitOnce map[string]int `json:"need_initonce,omitempty"`
	// Rates are the application-side exchange rates of entrance and exit
	// ports.
	Rates []PortRate `json:"rates,omitempty"`
}

// PortRate is the rate at which the application exchanges data with one
// entrance, exit or initonce port.
type PortRate struct {
	// Port is "actor.port"; Role its role.
	Port string `json:"port"`
	Role string `json:"role"`
	// Every is the port's iteration limit (1: each firing; 0 on an
	// initonce port: once, at the start).
	Every int `json:"every"`
	// Firings is the actor's firings per graph iteration (0 when dynamic).
	Firings int64 `json:"firings_per_iteration"`
	// Exchanges is the number of exchanges with the application per graph
	// iteration (Firings/Every; fractional when Every does not divide it).
	Exchanges float64 `json:"exchanges_per_iteration"`
	// Tokens is the tokens moved per exchange: one firing's worth (an
	// entrance's data is held for Every firings; an exit delivers the last
	// firing of each group of Every).
	Tokens int `json:"tokens_per_exchange"`
}

// CheckPipeline checks the pipeline-model conditions and roles of pl and
// reports its ports, the initonce ports it still needs and the iteration
// limits' rates.
func CheckPipeline(pl *graph.Pipeline) *PipelineReport {
	r := &PipelineReport{Entrance: []string{}, Exit: []string{}}
	if pl == nil || pl.Graph == nil {
		r.Errors = []string{"no pipeline"}
		return r
	}
	if err := pl.Validate(); err != nil {
		r.Errors = append(r.Errors, graph.ErrorLines(err)...)
	}
	r.Valid = len(r.Errors) == 0
	var rv *Repetitions
	if v, err := RepetitionVector(pl.Graph); err == nil {
		rv = v
	}
	for _, a := range pl.Graph.Actors {
		for _, q := range a.Ports() {
			pr := pl.RoleOf(q)
			switch pr.Role {
			case graph.Entrance:
				r.Entrance = append(r.Entrance, q.FullName())
			case graph.Exit:
				r.Exit = append(r.Exit, q.FullName())
			case graph.InitOnce:
				r.InitOnce = append(r.InitOnce, q.FullName())
			default:
				continue
			}
			r.Rates = append(r.Rates, portRate(q, pr, rv))
		}
	}
	if r.Valid {
		r.NeedInitOnce = needInitOnce(pl)
	}
	return r
}

func portRate(q *graph.Port, pr graph.PortRole, rv *Repetitions) PortRate {
	out := PortRate{Port: q.FullName(), Role: pr.Role.String(), Every: pr.Every}
	if rv != nil {
		out.Firings = rv.Firings[q.Actor.Name]
	}
	if pr.Every > 0 {
		out.Exchanges = float64(out.Firings) / float64(pr.Every)
	}
	if pr.Role == graph.InitOnce && pr.Every == 0 {
		out.Exchanges = 0 // once, at the start
	}
	if !q.Rate.IsDynamic() {
		out.Tokens = q.Rate.At(0) // an entrance's data is held between exchanges
		if pr.Role == graph.Exit {
			out.Tokens = q.Rate.At(pr.Every - 1) // the last firing of each group
		}
	}
	return out
}

// needInitOnce returns the consuming ports of channels the deadlock
// analysis says need initial tokens.
func needInitOnce(pl *graph.Pipeline) map[string]int {
	g := pl.Graph
	rv, err := RepetitionVector(g)
	if err != nil {
		return nil
	}
	m, err := build(g)
	if err != nil {
		return nil
	}
	q, err := m.targets(rv)
	if err != nil {
		return nil
	}
	d, err := m.deadlock(q)
	if err != nil || len(d.Initialize) == 0 {
		return nil
	}
	out := map[string]int{}
	names := make([]string, 0, len(d.Initialize))
	for n := range d.Initialize {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if c := g.Channel(n); c != nil && c.To != nil {
			out[c.To.FullName()] += d.Initialize[n]
		} else {
			out[fmt.Sprintf("channel %s", n)] += d.Initialize[n]
		}
	}
	return out
}
