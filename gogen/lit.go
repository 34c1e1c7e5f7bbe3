package gogen

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/sluicehq/sluice/graph"
)

// goName turns a graph or actor name into a Go identifier fragment.
func goName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 || unicode.IsDigit(rune(b.String()[0])) {
		return "g" + b.String()
	}
	return b.String()
}

// title upper-cases s's first letter.
func title(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// durationLit writes d as a Go expression of type time.Duration.
func durationLit(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Second, "time.Second"}, {time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}} {
		if d%u.d == 0 {
			return fmt.Sprintf("%d * %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Nanosecond", int64(d))
}

// rateLit writes r as a call of graph.SDF, graph.CSDF or graph.Dynamic.
func rateLit(r graph.Rate) string {
	switch {
	case r.IsDynamic():
		return "graph.Dynamic()"
	case r.IsCSDF():
		parts := make([]string, 0, r.Phases())
		for _, n := range r.List() {
			parts = append(parts, strconv.Itoa(n))
		}
		return "graph.CSDF(" + strings.Join(parts, ", ") + ")"
	default:
		return fmt.Sprintf("graph.SDF(%d)", r.Sum())
	}
}

var implKinds = map[graph.ImplKind]string{
	graph.ImplGo: "graph.ImplGo", graph.ImplOpenCL: "graph.ImplOpenCL",
	graph.ImplCUDA: "graph.ImplCUDA", graph.ImplBuiltin: "graph.ImplBuiltin",
}

func kindLit(k graph.ImplKind) string {
	if s, ok := implKinds[k]; ok {
		return s
	}
	return "graph.ImplKind(" + strconv.Quote(string(k)) + ")"
}

// implLit writes im as a graph.Impl composite literal (Func, a value of
// the process that loaded the graph, is not written).
func implLit(im graph.Impl) string {
	fields := []string{"Kind: " + kindLit(im.Kind)}
	if im.Source != "" {
		fields = append(fields, "Source: "+strconv.Quote(im.Source))
	}
	if im.Entry != "" {
		fields = append(fields, "Entry: "+strconv.Quote(im.Entry))
	}
	if len(im.Params) > 0 {
		fields = append(fields, "Params: "+valueLit(im.Params))
	}
	return "graph.Impl{" + strings.Join(fields, ", ") + "}"
}

// valueLit writes a built-in's parameter (the Go values spec keeps: maps,
// lists, strings, integers, floats, booleans, nil) as a Go expression whose
// dynamic type is the same.
func valueLit(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case bool:
		return strconv.FormatBool(x)
	case string:
		return strconv.Quote(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return fmt.Sprintf("int64(%d)", x)
	case uint64:
		return fmt.Sprintf("uint64(%d)", x)
	case float64:
		return floatLit(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = valueLit(e)
		}
		return "[]any{" + strings.Join(parts, ", ") + "}"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ": " + valueLit(x[k])
		}
		return "map[string]any{" + strings.Join(parts, ", ") + "}"
	default:
		return fmt.Sprintf("%#v", v)
	}
}

// floatLit writes f so that, stored in an any, it is a float64 again.
func floatLit(f float64) string {
	switch {
	case math.IsNaN(f):
		return "math.NaN()"
	case math.IsInf(f, 1):
		return "math.Inf(1)"
	case math.IsInf(f, -1):
		return "math.Inf(-1)"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		return "float64(" + s + ")"
	}
	return s
}

func bytesLit(b []byte) string {
	if b == nil {
		return "nil"
	}
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf("0x%02x", c)
	}
	return "[]byte{" + strings.Join(parts, ", ") + "}"
}

func stringMapLit(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Quote(k) + ": " + strconv.Quote(m[k])
	}
	return "map[string]string{" + strings.Join(parts, ", ") + "}"
}

// placementLit writes pl as a *graph.Placement literal's body (the element
// of a map literal, so without &graph.Placement).
func placementLit(pl *graph.Placement) string {
	var f []string
	add := func(cond bool, s string) {
		if cond {
			f = append(f, s)
		}
	}
	add(pl.Device != "", "Device: "+strconv.Quote(pl.Device))
	add(pl.Impl != "", "Impl: "+kindLit(pl.Impl))
	add(pl.Replicas != 0, fmt.Sprintf("Replicas: %d", pl.Replicas))
	add(pl.Team != "", "Team: graph.TeamMode("+strconv.Quote(string(pl.Team))+")")
	add(pl.WorkGroups != 0, fmt.Sprintf("WorkGroups: %d", pl.WorkGroups))
	add(pl.WorkItems != 0, fmt.Sprintf("WorkItems: %d", pl.WorkItems))
	if len(pl.Distribution) > 0 {
		keys := make([]string, 0, len(pl.Distribution))
		for k := range pl.Distribution {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ": graph.Distribution(" + strconv.Quote(string(pl.Distribution[k])) + ")"
		}
		f = append(f, "Distribution: map[string]graph.Distribution{"+strings.Join(parts, ", ")+"}")
	}
	add(pl.Priority != 0, fmt.Sprintf("Priority: %d", pl.Priority))
	if len(pl.Affinity) > 0 {
		parts := make([]string, len(pl.Affinity))
		for i, c := range pl.Affinity {
			parts[i] = strconv.Itoa(c)
		}
		f = append(f, "Affinity: []int{"+strings.Join(parts, ", ")+"}")
	}
	add(pl.Any != "", "Any: "+strconv.Quote(pl.Any))
	return "{" + strings.Join(f, ", ") + "}"
}
