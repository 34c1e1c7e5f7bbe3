package graph

import (
	"fmt"
	"strconv"
	"strings"
)

// Rate is the number of tokens a port moves per firing. A single phase is a
// synchronous dataflow (SDF) rate; several phases make a cyclo-static (CSDF)
// rate, the actor cycling through them firing after firing; Dynamic marks a
// Kahn process network port whose process reads or writes at will.
type Rate struct {
	phases  []int
	dynamic bool
}

// SDF returns the fixed rate n (n ≥ 0).
func SDF(n int) Rate { return Rate{phases: []int{n}} }

// CSDF returns a cyclo-static rate with the given phases.
func CSDF(phases ...int) Rate { return Rate{phases: append([]int(nil), phases...)} }

// Dynamic returns the rate of a Kahn process network port.
func Dynamic() Rate { return Rate{dynamic: true} }

// IsDynamic reports whether the rate is dynamic (KPN).
func (r Rate) IsDynamic() bool { return r.dynamic }

// IsZero reports whether the rate was never set.
func (r Rate) IsZero() bool { return !r.dynamic && len(r.phases) == 0 }

// IsCSDF reports whether the rate has more than one phase.
func (r Rate) IsCSDF() bool { return len(r.phases) > 1 }

// Phases returns the number of phases: 1 for SDF, 0 for dynamic.
func (r Rate) Phases() int { return len(r.phases) }

// At returns the tokens moved in firing number k (counting from 0), cycling
// through the phases. It returns 0 for a dynamic rate.
func (r Rate) At(k int) int {
	if len(r.phases) == 0 {
		return 0
	}
	return r.phases[k%len(r.phases)]
}

// TokensBefore returns the tokens moved by firings 0 … k−1 (0 for a
// dynamic rate).
func (r Rate) TokensBefore(k int64) int64 {
	ph := int64(len(r.phases))
	switch ph {
	case 0:
		return 0
	case 1:
		return k * int64(r.phases[0])
	}
	n := k / ph * int64(r.Sum())
	for i := int64(0); i < k%ph; i++ {
		n += int64(r.phases[i])
	}
	return n
}

// Sum returns the tokens moved over one full cycle of phases.
func (r Rate) Sum() int {
	s := 0
	for _, p := range r.phases {
		s += p
	}
	return s
}

// Max returns the largest phase.
func (r Rate) Max() int {
	m := 0
	for _, p := range r.phases {
		m = max(m, p)
	}
	return m
}

// List returns a copy of the phases.
func (r Rate) List() []int { return append([]int(nil), r.phases...) }

// Equal reports whether two rates are identical.
func (r Rate) Equal(o Rate) bool {
	if r.dynamic != o.dynamic || len(r.phases) != len(o.phases) {
		return false
	}
	for i := range r.phases {
		if r.phases[i] != o.phases[i] {
			return false
		}
	}
	return true
}

// String renders the rate as the spec files write it: "4", "[1,2,1]" or "dynamic".
func (r Rate) String() string {
	if r.dynamic {
		return "dynamic"
	}
	if len(r.phases) == 1 {
		return strconv.Itoa(r.phases[0])
	}
	parts := make([]string, len(r.phases))
	for i, p := range r.phases {
		parts[i] = strconv.Itoa(p)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// ParseRate parses "4", "[1,2,1]", "1,2,1" or "dynamic".
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "dynamic" || s == "kpn" {
		return Dynamic(), nil
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var ph []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return Rate{}, fmt.Errorf("rate %q: expected a non-negative integer, a list of them, or \"dynamic\"", s)
		}
		ph = append(ph, n)
	}
	return Rate{phases: ph}, nil
}
