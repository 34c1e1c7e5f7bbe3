package calibrate

import (
	"strconv"

	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
)

// BusyLoop reads how much longer than asked a busy loop on the clock
// lasts on the host m was calibrated on (BurnLoad): extraNs + stretch × d
// for a loop of d. ok is false for a machine without that calibration (one
// written by hand); a model calibrated before the stretch was measured
// has stretch 0.
func BusyLoop(m *machine.Machine) (extraNs, stretch float64, ok bool) {
	if m == nil {
		return 0, 0, false
	}
	extraNs, err := strconv.ParseFloat(m.Calibration["burn_extra_ns"], 64)
	if err != nil {
		return 0, 0, false
	}
	stretch, err = strconv.ParseFloat(m.Calibration["burn_stretch"], 64)
	if err != nil {
		stretch = 0
	}
	return max(0, extraNs), max(0, stretch), true
}

// SyntheticBurn is the simulator's model of the busy loops that sluice run
// gives the synthetic actors named (flattened names, as
// actors.Unimplemented lists them) on the host m was calibrated on: each
// declared cost d lasts d × (1 + stretch) + extra there (BusyLoop). nil
// when names is empty or m has no such calibration (the declared costs
// stand).
func SyntheticBurn(m *machine.Machine, names []string) *sim.Burn {
	extra, stretch, ok := BusyLoop(m)
	if !ok || len(names) == 0 {
		return nil
	}
	b := &sim.Burn{Extra: extra / 1e9, Stretch: stretch, Actors: map[string]bool{}}
	for _, n := range names {
		b.Actors[n] = true
	}
	return b
}
