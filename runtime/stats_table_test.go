package runtime

import (
	"bytes"
	"strings"
	"testing"
)

// TestTableFusedReplicas checks that the table tells a fused chain's
// replicas as the chain's, not as its actors' own: a row reading
// "replicas 2" beside "fused(a..b)" would contradict itself.
func TestTableFusedReplicas(t *testing.T) {
	t.Parallel()
	st := &Stats{Actors: []ActorStats{
		{Name: "src", Kind: "sdf", Replicas: 1},
		{Name: "a", Kind: "sdf", Replicas: 2, Fused: "fused(a..b)"},
		{Name: "b", Kind: "sdf", Replicas: 2, Fused: "fused(a..b)"},
		{Name: "c", Kind: "sdf", Replicas: 3},
		{Name: "d", Kind: "sdf", Replicas: 1, Fused: "fused(d..e)"},
	}}
	var b bytes.Buffer
	if err := st.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	for name, want := range map[string]string{
		"a": "sdf 0 0s 0s 0s 0s 0 0 0 0 fused(a..b) ×2 replicas of the chain",
		"b": "sdf 0 0s 0s 0s 0s 0 0 0 0 fused(a..b) ×2 replicas of the chain",
		"c": "sdf 0 0s 0s 0s 0s 0 0 0 0 3",
		"d": "sdf 0 0s 0s 0s 0s 0 0 0 0 fused(d..e)",
	} {
		if got := strings.Join(rows[name][1:], " "); got != want {
			t.Errorf("row %s = %q, want %q\n%s", name, got, want, b.String())
		}
	}
}
