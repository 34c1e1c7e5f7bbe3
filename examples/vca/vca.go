// Package vca is hyperspectral unmixing with Vertex Component Analysis
// (VCA, Nascimento and Bioucas-Dias 2005) as a sluice graph, following the
// CGMBE application model of the VCA application (seed 003, §6.4,
// Fig. 6.7–6.8): a stream of synthetic hyperspectral cubes with known
// endmembers → band statistics → SVD and SNR estimate → projective or
// subspace projection → the VCA iterations → abundance estimation → a sink
// that scores the endmembers against the truth.
//
// Importing the package registers the graph's Go actors (vca.source,
// vca.stats, vca.svd, vca.project, vca.extract, vca.unmix, vca.sink).
// Each cube is cut into blocks of pixels: source, stats, project and unmix
// fire once per block (data-parallel, stateless: a mapping gives them
// replicas), svd and extract once per cube. Several cubes are in flight at
// once when the channels hold them: that is the unfolding factor J of the
// seed (J graph iterations unrolled), set by the benchmark in bench/.
//
// The numerics use gonum (float64) for the statistics (a symmetric rank-k
// update), the eigendecompositions and the small inverses; the per-pixel
// steps (Project, Unmix) compute in float32 like their OpenCL C and CUDA C
// versions (project.cl/.cu, unmix.cl/.cu; stats.cl/.cu for the
// statistics).
package vca

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/sluicehq/sluice/runtime"
)

func init() {
	runtime.RegisterFunc("vca.source", runtime.FireFunc(Source))
	runtime.RegisterFunc("vca.stats", runtime.FireFunc(fireStats))
	runtime.RegisterFunc("vca.svd", runtime.FireFunc(fireSVD))
	runtime.RegisterFunc("vca.project", runtime.FireFunc(fireProject))
	runtime.RegisterFunc("vca.extract", runtime.FireFunc(fireExtract))
	runtime.RegisterFunc("vca.unmix", runtime.FireFunc(fireUnmix))
	runtime.RegisterFunc("vca.sink", runtime.FireFunc(DefaultSink.Fire))
}

// window checks that port i of the firing (input when in, else output)
// holds want f32 tokens and returns it.
func window(f *runtime.Firing, in bool, i, want int) ([]float32, error) {
	var w []float32
	dir := "output"
	if in {
		w = runtime.Input[float32](f, i)
		dir = "input"
	} else {
		w = runtime.Output[float32](f, i)
	}
	if len(w) != want {
		return nil, fmt.Errorf("vca: actor %s %s %d: window of %d f32 tokens, expected %d from the actor's attrs (check the port rates against bands, block, width, height, endmembers)", f.Actor().Name, dir, i, len(w), want)
	}
	return w, nil
}

// Source emits block n mod B of cube n / B (B blocks per cube), and ends
// the stream after Cubes cubes. Stateless: a mapping may replicate it.
func Source(f *runtime.Firing) error {
	p, err := actorParams(f.Actor())
	if err != nil {
		return err
	}
	out, err := window(f, false, 0, p.BlockPx*p.Bands)
	if err != nil {
		return err
	}
	B := int64(p.Blocks())
	c, b := f.Index()/B, int(f.Index()%B)
	if p.Cubes > 0 && c >= int64(p.Cubes) {
		return runtime.ErrEndOfStream
	}
	n := len(out)
	copy(out, p.CubeAt(c).Y[b*n:(b+1)*n])
	return nil
}

func fireStats(f *runtime.Firing) error {
	p, err := actorParams(f.Actor())
	if err != nil {
		return err
	}
	y, err := window(f, true, 0, p.BlockPx*p.Bands)
	if err != nil {
		return err
	}
	part, err := window(f, false, 0, StatsLen(p.Bands))
	if err != nil {
		return err
	}
	Stats(y, p.Bands, part)
	return nil
}

func fireSVD(f *runtime.Firing) error {
	p, err := actorParams(f.Actor())
	if err != nil {
		return err
	}
	L, m, B := p.Bands, p.Endmembers, p.Blocks()
	parts, err := window(f, true, 0, B*StatsLen(L))
	if err != nil {
		return err
	}
	basis, err := window(f, false, 0, B*BasisLen(L, m))
	if err != nil {
		return err
	}
	info, err := window(f, false, 1, BasisLen(L, m))
	if err != nil {
		return err
	}
	bs, err := SolveBasis(parts, L, m, p.Pixels())
	if err != nil {
		return fmt.Errorf("cube %d: %w", f.Index(), err)
	}
	bs.Encode(info)
	for i := range B {
		copy(basis[i*len(info):], info)
	}
	return nil
}

func fireProject(f *runtime.Firing) error {
	p, err := actorParams(f.Actor())
	if err != nil {
		return err
	}
	L, m := p.Bands, p.Endmembers
	y, err := window(f, true, 0, p.BlockPx*L)
	if err != nil {
		return err
	}
	basis, err := window(f, true, 1, BasisLen(L, m))
	if err != nil {
		return err
	}
	out, err := window(f, false, 0, p.BlockPx*ProjLen(m))
	if err != nil {
		return err
	}
	Project(y, basis, L, m, out)
	return nil
}

// ExtractRand is the random source of the VCA iterations of cube c: the
// same for the graph and the sequential version.
func ExtractRand(p Params, c int64) *rand.Rand {
	return rand.New(rand.NewPCG(p.Seed, uint64(c)))
}

func fireExtract(f *runtime.Firing) error {
	p, err := actorParams(f.Actor())
	if err != nil {
		return err
	}
	L, m, B := p.Bands, p.Endmembers, p.Blocks()
	proj, err := window(f, true, 0, p.Pixels()*ProjLen(m))
	if err != nil {
		return err
	}
	info, err := window(f, true, 1, BasisLen(L, m))
	if err != nil {
		return err
	}
	wout, err := window(f, false, 0, B*m*L)
	if err != nil {
		return err
	}
	em, err := window(f, false, 1, EndmemberLen(L, m))
	if err != nil {
		return err
	}
	bs := DecodeBasis(info, L, m)
	_, e := Extract(proj, bs, m, ExtractRand(p, f.Index()))
	w, err := Unmixer(e, L, m)
	if err != nil {
		return fmt.Errorf("cube %d: %w", f.Index(), err)
	}
	copy(em[:Header], info[:Header])
	for i, v := range e {
		em[Header+i] = float32(v)
	}
	for i := range B {
		for j, v := range w {
			wout[i*len(w)+j] = float32(v)
		}
	}
	return nil
}

func fireUnmix(f *runtime.Firing) error {
	p, err := actorParams(f.Actor())
	if err != nil {
		return err
	}
	L, m := p.Bands, p.Endmembers
	y, err := window(f, true, 0, p.BlockPx*L)
	if err != nil {
		return err
	}
	w, err := window(f, true, 1, m*L)
	if err != nil {
		return err
	}
	out, err := window(f, false, 0, p.BlockPx*m)
	if err != nil {
		return err
	}
	Unmix(y, w, L, m, out)
	return nil
}

// Result scores one cube's unmixing against its ground truth.
type Result struct {
	Cube      int64   // index in the stream
	Mode      int     // Projective or Subspace
	SNR       float64 // estimated SNR, dB
	MaxAngle  float64 // largest spectral angle between a recovered endmember and its true one, degrees
	MeanAngle float64 // mean of those angles, degrees
	RMSE      float64 // root mean square error of the abundances
}

// String renders the result as one line.
func (r Result) String() string {
	mode := "projective"
	if r.Mode == Subspace {
		mode = "subspace"
	}
	return fmt.Sprintf("cube %d: %s projection (SNR %.1f dB): endmember angles max %.2f° mean %.2f°, abundance RMSE %.4f",
		r.Cube, mode, r.SNR, r.MaxAngle, r.MeanAngle, r.RMSE)
}

// Evaluate scores cube c's recovered endmembers (an EndmemberLen token)
// and abundances (pixels × p) against the truth.
func Evaluate(p Params, c int64, em []float32, ab []float32) Result {
	L, m := p.Bands, p.Endmembers
	cu := p.CubeAt(c)
	e := make([]float64, m*L)
	for i := range e {
		e[i] = float64(em[Header+i])
	}
	perm, ang := Match(e, cu.E, L, m)
	r := Result{Cube: c, Mode: int(em[0]), SNR: float64(em[1])}
	for _, a := range ang {
		r.MaxAngle = max(r.MaxAngle, a)
		r.MeanAngle += a / float64(m)
	}
	var se float64
	for i := range p.Pixels() {
		for k, j := range perm {
			d := float64(ab[i*m+k]) - cu.A[i*m+j]
			se += d * d
		}
	}
	r.RMSE = math.Sqrt(se / float64(p.Pixels()*m))
	return r
}

// Sink collects the results of the graph's sink actor (vca.sink), in cube
// order, and prints each as a line on its output.
type Sink struct {
	mu      sync.Mutex
	out     io.Writer
	results []Result
}

// DefaultSink is the sink registered as vca.sink; it prints to standard
// output.
var DefaultSink = &Sink{out: os.Stdout}

// SetOutput sets where the sink prints its lines (nil: nowhere).
func (s *Sink) SetOutput(w io.Writer) {
	s.mu.Lock()
	s.out = w
	s.mu.Unlock()
}

// Fire scores one cube (firing n is cube n).
func (s *Sink) Fire(f *runtime.Firing) error {
	p, err := actorParams(f.Actor())
	if err != nil {
		return err
	}
	em, err := window(f, true, 0, EndmemberLen(p.Bands, p.Endmembers))
	if err != nil {
		return err
	}
	ab, err := window(f, true, 1, p.Pixels()*p.Endmembers)
	if err != nil {
		return err
	}
	r := Evaluate(p, f.Index(), em, ab)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results = append(s.results, r)
	if s.out != nil {
		fmt.Fprintln(s.out, r)
	}
	return nil
}

// Take returns the results collected so far and forgets them.
func (s *Sink) Take() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.results
	s.results = nil
	return r
}

// Sequential unmixes cubes 0 … cubes−1 one after another with the same
// functions, without a graph (the seed's Sequential Version, Fig. 6.7).
// The statistics are summed block by block as in the graph (a whole cube
// at once runs about four times slower: its float64 copy does not stay in
// the caches); the other steps take the whole cube.
func Sequential(p Params, cubes int) ([]Result, error) {
	L, m, n := p.Bands, p.Endmembers, p.Pixels()
	sl := StatsLen(L)
	parts := make([]float32, p.Blocks()*sl)
	basis := make([]float32, BasisLen(L, m))
	proj := make([]float32, n*ProjLen(m))
	ab := make([]float32, n*m)
	em := make([]float32, EndmemberLen(L, m))
	w32 := make([]float32, m*L)
	res := make([]Result, 0, cubes)
	for c := range int64(cubes) {
		y := p.CubeAt(c).Y
		bl := p.BlockPx * L
		for b := range p.Blocks() {
			Stats(y[b*bl:(b+1)*bl], L, parts[b*sl:(b+1)*sl])
		}
		bs, err := SolveBasis(parts, L, m, n)
		if err != nil {
			return res, fmt.Errorf("cube %d: %w", c, err)
		}
		bs.Encode(basis)
		Project(y, basis, L, m, proj)
		bs = DecodeBasis(basis, L, m)
		_, e := Extract(proj, bs, m, ExtractRand(p, c))
		w, err := Unmixer(e, L, m)
		if err != nil {
			return res, fmt.Errorf("cube %d: %w", c, err)
		}
		for i, v := range w {
			w32[i] = float32(v)
		}
		Unmix(y, w32, L, m, ab)
		copy(em, basis[:Header])
		for i, v := range e {
			em[Header+i] = float32(v)
		}
		res = append(res, Evaluate(p, c, em, ab))
	}
	return res, nil
}
