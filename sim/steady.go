package sim

// MaxSteadyIterations bounds the iterations RunUntilSteady simulates.
const MaxSteadyIterations = 1 << 16

// RunUntilSteady is Run, run again with 4 times the iterations (up to
// MaxSteadyIterations) while it ends before its steady state
// (Result.Transient): the channels hold more iterations than the run, and
// the period measured was the drain's (the image pipeline at G 256
// simulated at 716k frames/s over 2 048 iterations, 420k over 20 000).
func RunUntilSteady(p *Program, cfg Config) (*Result, error) {
	for {
		r, err := Run(p, cfg)
		if err != nil || !r.Transient || cfg.Iterations >= MaxSteadyIterations {
			return r, err
		}
		cfg.Iterations = min(4*cfg.Iterations, MaxSteadyIterations)
	}
}
