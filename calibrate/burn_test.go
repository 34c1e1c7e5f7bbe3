package calibrate

import (
	"testing"

	"github.com/sluicehq/sluice/machine"
)

// TestBurnLoad: the busy loops' excess is measured as a fixed part and a
// share of the loop, both non-negative and bounded on any host.
func TestBurnLoad(t *testing.T) {
	extra, stretch := BurnLoad(2)
	if extra < 0 || extra > 1e5 || stretch < 0 || stretch > 10 {
		t.Fatalf("BurnLoad(2) = %.0f ns + %.3f × d: expected a fixed part of 0 to 100 µs and a stretch of 0 to 10", extra, stretch)
	}
}

// TestBurnFit: cd2dat's firings on the 16-core host lasted 127 ns more
// than declared at 50 ns and 243 ns more at 3 µs: about 4 % and 125 ns.
func TestBurnFit(t *testing.T) {
	extra, stretch := burnFit(125+0.04*1000, 125+0.04*4000)
	if extra < 124.9 || extra > 125.1 || stretch < 0.0399 || stretch > 0.0401 {
		t.Fatalf("burnFit = %.2f ns + %.4f × d: expected 125 ns + 0.04 × d", extra, stretch)
	}
	if extra, stretch = burnFit(300, 200); extra != 300 || stretch != 0 {
		t.Fatalf("a 4 µs loop with less excess than a 1 µs one: burnFit = %.0f ns + %.3f × d, expected 300 ns + 0", extra, stretch)
	}
}

// TestSyntheticBurn: the calibrated busy loop charges the synthetic actors
// named, and a machine without the calibration (or no names) gives none.
func TestSyntheticBurn(t *testing.T) {
	m := &machine.Machine{Calibration: map[string]string{"burn_extra_ns": "120", "burn_stretch": "0.04"}}
	b := SyntheticBurn(m, []string{"C"})
	if b == nil || !b.Actors["C"] || b.Actors["D"] {
		t.Fatalf("SyntheticBurn = %+v: expected actor C only", b)
	}
	if got := b.Time(900e-9); got < 1055e-9 || got > 1057e-9 {
		t.Fatalf("a 900 ns loop lasts %.1f ns: expected 900 × 1.04 + 120 = 1056", got*1e9)
	}
	if SyntheticBurn(m, nil) != nil || SyntheticBurn(&machine.Machine{}, []string{"C"}) != nil {
		t.Fatal("expected no model without names or without the calibration")
	}
	old := &machine.Machine{Calibration: map[string]string{"burn_extra_ns": "80"}}
	if e, s, ok := BusyLoop(old); !ok || e != 80 || s != 0 {
		t.Fatalf("a model without burn_stretch: BusyLoop = %v, %v, %v; expected 80, 0, true", e, s, ok)
	}
}
