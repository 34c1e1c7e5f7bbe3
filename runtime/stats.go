package runtime

import (
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sluicehq/sluice/device"
)

// Stats are a run's statistics.
type Stats struct {
	// Elapsed is the run's wall-clock time.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Actors in graph order (flattened names).
	Actors []ActorStats `json:"actors"`
	// Channels in graph order.
	Channels []ChannelStats `json:"channels"`
	// Shared are the graph's shared variables at the end of the run.
	Shared []SharedStats `json:"shared,omitempty"`
	// State holds, by actor name, the state copied out at the end
	// (graph.CopyOutState; a team's leader value).
	State map[string][]byte `json:"state,omitempty"`
	// Devices are the devices whose kernel actors ran in rounds (batches
	// of launches), with what became of their batches.
	Devices []DeviceStats `json:"devices,omitempty"`
	// Checkpoints summarise the run's checkpoints (nil without them).
	Checkpoints *CheckpointStats `json:"checkpoints,omitempty"`
	// TraceDropped counts the events the trace (Options.Trace) did not
	// record because it held Options.TraceLimit events already.
	TraceDropped int64 `json:"trace_dropped,omitempty"`
}

// DeviceStats are one device's statistics.
type DeviceStats struct {
	// Device is the device's id ("cuda:0").
	Device string `json:"device"`
	// Rounds counts the rounds the device's manager enqueued as batches
	// (Batches), their launches, and how many were replayed as cached
	// graphs, with arguments set anew or not, and captured.
	Rounds device.BatchStats `json:"rounds"`
}

// ActorStats are one actor's statistics.
type ActorStats struct {
	// Name is the flattened actor name.
	Name string `json:"name"`
	// Kind is "sdf", "csdf", "process" (KPN), "kernel" or "remote" (run on
	// a worker).
	Kind string `json:"kind"`
	// Firings is the number of committed firings (0 for a process).
	Firings int64 `json:"firings"`
	// Busy is the time spent firing (for a process: its life time less the
	// time it was blocked on its FIFOs).
	Busy time.Duration `json:"busy_ns"`
	// BlockedIn is the time the actor waited for input tokens; BlockedOut
	// the time it waited for room on an output. For pooled actors it is the
	// time between finding the actor not ready and firing it again.
	BlockedIn  time.Duration `json:"blocked_in_ns"`
	BlockedOut time.Duration `json:"blocked_out_ns"`
	// Tokens and bytes consumed and produced.
	TokensIn  int64 `json:"tokens_in"`
	TokensOut int64 `json:"tokens_out"`
	BytesIn   int64 `json:"bytes_in"`
	BytesOut  int64 `json:"bytes_out"`
	// Replicas is the team size (1 when not replicated).
	Replicas int `json:"replicas"`
	// Mean, Min, Max and P50 are firing times; P50 comes from a log-linear
	// histogram (within 12.5%). Firings that take under 5 µs on average
	// are timed a round at a time when no trace is taken (one clock read
	// per round): then Min, Max and P50 are those of the rounds' mean
	// firing times, as for a kernel's invocations; Busy and Mean stay
	// exact.
	Mean time.Duration `json:"mean_ns"`
	Min  time.Duration `json:"min_ns"`
	Max  time.Duration `json:"max_ns"`
	P50  time.Duration `json:"p50_ns"`
	// Branches, for a conditional pattern actor, counts the firings that
	// ran each branch (indexed by control value).
	Branches []int64 `json:"branches,omitempty"`
	// Fused names the fused chain (one scheduling unit) that ran the
	// actor, empty when it ran on its own (docs/runtime.md, "Fused
	// chains").
	Fused string `json:"fused"`
	// Device, WorkGroups and DeviceMode describe a kernel actor's
	// invocations: the device ID, the firings per invocation (G) and how
	// they were enqueued. With DeviceMode Callback one invocation is in
	// flight at a time, so Mean is each invocation's own time (copies,
	// launch and kernel) over its firings; with EnqueueAhead it is the
	// actor's share of the time between the device's completions.
	Device     string     `json:"device,omitempty"`
	WorkGroups int64      `json:"work_groups,omitempty"`
	DeviceMode DeviceMode `json:"device_mode,omitempty"`
}

// ChannelStats are one channel's statistics. Channels fed by one output
// port share one FIFO (broadcast): they report the same capacity, peak fill
// and copied bytes.
type ChannelStats struct {
	// Name is the channel's name.
	Name string `json:"name"`
	// Capacity in tokens.
	Capacity int `json:"capacity"`
	// PeakFill is the most tokens the FIFO held.
	PeakFill int `json:"peak_fill"`
	// CopiedBytes are the bytes moved by copy access (Read/Write) rather
	// than windows, plus those copied between the FIFO and a device.
	CopiedBytes int64 `json:"copied_bytes"`
	// Left is the number of tokens the channel held at the end.
	Left int64 `json:"left"`
	// Device names the device holding the channel's ring buffer when both
	// ends are kernel actors of that device (then CopiedBytes is 0: the
	// kernels read and write the ring in place); empty for host FIFOs,
	// whose CopiedBytes include the bytes staged to and from devices.
	Device string `json:"device,omitempty"`
	// Peer names the device holding the ring of a channel between kernel
	// actors of two devices that copy between themselves, "cuda:1" (then
	// CopiedBytes are the bytes copied device to device, none through the
	// host), with " (direct)" when the devices reach each other's memory
	// (NVLink or PCIe peer access) rather than through the driver's staging.
	Peer string `json:"peer,omitempty"`
}

// histN is the number of buckets of the firing-time histogram: values 0..3,
// then 4 buckets per power of two.
const histN = 256

// unitAcc accumulates one unit's firing times in one execution context (or
// those its runner ran in sequence). Its zero value is empty: min and max
// count once n > 0.
type unitAcc struct {
	n    int64
	busy int64
	min  int64
	max  int64
	hist [histN]uint64
}

func histBucket(v int64) int {
	if v < 4 {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 1
	m := int(v>>(e-2)) & 3
	return 4 + (e-2)*4 + m
}

// histMid returns the middle of bucket i.
func histMid(i int) int64 {
	if i < 4 {
		return int64(i)
	}
	e := (i-4)/4 + 2
	m := int64((i - 4) % 4)
	lo := (4 + m) << (e - 2)
	hi := (5 + m) << (e - 2)
	return (lo + hi) / 2
}

func (a *unitAcc) add(d int64) {
	if a.n == 0 || d < a.min {
		a.min = d
	}
	a.n++
	a.busy += d
	if d > a.max {
		a.max = d
	}
	a.hist[histBucket(d)]++
}

// addN records k firings that took span ns together, each span/k (a
// kernel invocation's firings), in O(1).
func (a *unitAcc) addN(span, k int64) {
	d := span / k // one division: a fused chain records every stage of every batch
	if a.n == 0 || d < a.min {
		a.min = d
	}
	a.n += k
	a.busy += span
	e := d // span/k rounded up (span ≥ 0: the clock is monotonic)
	if span-d*k > 0 {
		e++
	}
	if e > a.max {
		a.max = e
	}
	a.hist[histBucket(d)] += uint64(k)
}

func (a *unitAcc) merge(b *unitAcc) {
	if b.n > 0 && (a.n == 0 || b.min < a.min) {
		a.min = b.min
	}
	a.n += b.n
	a.busy += b.busy
	a.max = max(a.max, b.max)
	for i := range a.hist {
		a.hist[i] += b.hist[i]
	}
}

func (a *unitAcc) p50() int64 {
	if a.n == 0 {
		return 0
	}
	half := (a.n + 1) / 2
	var s uint64
	for i, c := range a.hist {
		s += c
		if int64(s) >= half {
			return min(max(histMid(i), a.min), a.max)
		}
	}
	return a.max
}

// deviceMode is the run's Options.DeviceMode, EnqueueAhead when unset.
func (r *run) deviceMode() DeviceMode {
	if r.opts.DeviceMode == "" {
		return EnqueueAhead
	}
	return r.opts.DeviceMode
}

// stats gathers the statistics once every goroutine has ended.
func (r *run) stats() *Stats {
	st := &Stats{}
	if !r.start.IsZero() {
		st.Elapsed = time.Since(r.start)
	}
	for _, u := range r.units {
		var acc unitAcc
		acc.merge(&u.acc)
		for _, c := range r.ctxs {
			if a := c.acc[u.idx]; a != nil {
				acc.merge(a)
			}
		}
		as := ActorStats{Name: u.name, Kind: "sdf", Firings: u.firings.Load(), Replicas: u.replicas}
		if u.phases > 1 {
			as.Kind = "csdf"
		}
		as.Branches = branchCounts(u.lifecycle())
		var fifoIn, fifoOut time.Duration
		for i := range u.ins {
			p := &u.ins[i]
			if p.ring != nil {
				t := as.Firings * p.sum
				as.TokensIn += t
				as.BytesIn += t * int64(p.tsize)
				continue
			}
			if p.r == nil {
				continue
			}
			t := int64(p.r.Position())
			as.TokensIn += t
			as.BytesIn += t * int64(p.tsize)
			fifoIn += p.r.BlockedTime()
		}
		for i := range u.outs {
			p := &u.outs[i]
			if p.ring != nil {
				t := as.Firings * p.sum
				as.TokensOut += t
				as.BytesOut += t * int64(p.tsize)
				continue
			}
			if p.w == nil {
				continue
			}
			t := int64(p.w.Position()) - int64(p.fr.chans[0].c.Initial)
			as.TokensOut += t
			as.BytesOut += t * int64(p.tsize)
			fifoOut += p.w.BlockedTime()
		}
		as.Busy = time.Duration(acc.busy)
		u.mode.stats(u, &as, fifoIn, fifoOut) // kind, blocked time, device

		if acc.n > 0 {
			as.Mean = time.Duration(acc.busy / acc.n)
			as.Min = time.Duration(acc.min)
			as.Max = time.Duration(acc.max)
			as.P50 = time.Duration(acc.p50())
		}
		st.Actors = append(st.Actors, as)
	}
	for _, d := range r.devs {
		if bc, ok := d.bat.(device.BatchCounter); ok {
			st.Devices = append(st.Devices, DeviceStats{Device: d.id, Rounds: bc.BatchStats()})
		}
	}
	for _, c := range r.chans {
		if g := c.ring; g != nil {
			st.Channels = append(st.Channels, ChannelStats{
				Name: c.c.Name, Capacity: int(g.cap), PeakFill: int(g.peak), Left: c.left(),
				Device: g.prod.kernel().drv.id,
			})
			continue
		}
		st.Channels = append(st.Channels, ChannelStats{
			Name: c.c.Name, Capacity: c.fr.f.Capacity(), PeakFill: c.fr.f.PeakFill(),
			CopiedBytes: c.fr.f.CopiedBytes() + c.fr.f.TailCopiedBytes() + c.devCopied.Load(), Left: c.left(),
		})
		if p := c.peer; p != nil {
			cs := &st.Channels[len(st.Channels)-1]
			cs.Peer = p.buf.Device().Info().ID
			if p.direct {
				cs.Peer += " (direct)"
			}
		}
	}
	return st
}

// Actor returns the statistics of the named actor, or nil.
func (s *Stats) Actor(name string) *ActorStats {
	for i := range s.Actors {
		if s.Actors[i].Name == name {
			return &s.Actors[i]
		}
	}
	return nil
}

// WriteTable writes the statistics as two aligned text tables (actors,
// then channels).
func (s *Stats) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fused := false
	for _, a := range s.Actors {
		fused = fused || a.Fused != ""
	}
	head := "actor\tkind\tfirings\tmean\tbusy\tblocked in\tblocked out\ttokens in\ttokens out\tbytes in\tbytes out\treplicas\t"
	if fused { // a column for the fused chains, when there are any
		head += "fused\t"
	}
	fmt.Fprintln(tw, head)
	for _, a := range s.Actors {
		replicas, fusedCell := replicaCells(a)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%v\t%v\t%v\t%d\t%d\t%d\t%d\t%s\t", a.Name, a.Kind, a.Firings,
			a.Mean, a.Busy.Round(time.Microsecond), a.BlockedIn.Round(time.Microsecond), a.BlockedOut.Round(time.Microsecond),
			a.TokensIn, a.TokensOut, a.BytesIn, a.BytesOut, replicas)
		if fused {
			fmt.Fprintf(tw, "%s\t", fusedCell)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "\t\t\t\t\t\t\t\t\t\t\t\t\n")
	fmt.Fprintf(tw, "channel\tcapacity\tpeak fill\tcopied bytes\tleft\tin\t\n")
	for _, c := range s.Channels {
		in := "host memory"
		switch {
		case c.Device != "":
			in = "ring on " + c.Device
		case c.Peer != "":
			in = "peer ring on " + c.Peer
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", c.Name, c.Capacity, c.PeakFill, c.CopiedBytes, c.Left, in)
	}
	if len(s.Devices) > 0 {
		fmt.Fprintf(tw, "\t\t\t\t\t\t\t\t\t\t\t\t\n")
		fmt.Fprintf(tw, "device\trounds\tlaunches\tas graphs\targs set\tcaptured\t\n")
		for _, d := range s.Devices {
			b := d.Rounds
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", d.Device, b.Batches, b.Launches, b.Replayed, b.Updated, b.Captured)
		}
	}
	fmt.Fprintf(tw, "elapsed\t%v\t\n", s.Elapsed.Round(time.Microsecond))
	return tw.Flush()
}

// replicaCells is an actor's replicas and fused cells in the table: an
// actor in a fused chain is not replicated on its own, the chain is, so
// its replicas are told in the fused cell ("fused(a..b) ×2 replicas of
// the chain") and its replicas cell is empty.
func replicaCells(a ActorStats) (replicas, fused string) {
	if a.Fused == "" {
		return strconv.Itoa(a.Replicas), ""
	}
	if a.Replicas > 1 {
		return "", fmt.Sprintf("%s ×%d replicas of the chain", a.Fused, a.Replicas)
	}
	return "", a.Fused
}

// WriteProfile writes the measured firing times as a YAML profile for the
// mapping and the simulator:
//
//	# sluice actor profile: measured CPU firing times (ns)
//	device: cpu
//	actors:
//	  "scale":
//	    firings: 1000
//	    mean_ns: 20113
//	    min_ns: 19870
//	    max_ns: 40211
//	    p50_ns: 20480
//
// A kernel actor's entry adds kind: kernel, its device, work_groups (G,
// firings per invocation) and device_mode: its mean is each invocation's
// own time over its firings only with device_mode callback (see
// ActorStats.DeviceMode).
//
// Actors that never fired (and KPN processes) are left out.
func (s *Stats) WriteProfile(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# sluice actor profile: measured CPU firing times (ns)\n")
	b.WriteString("device: cpu\n")
	b.WriteString("actors:\n")
	n := 0
	for _, a := range s.Actors {
		if a.Firings == 0 || a.Kind == "process" {
			continue
		}
		n++
		fmt.Fprintf(&b, "  %s:\n", strconv.Quote(a.Name))
		fmt.Fprintf(&b, "    firings: %d\n", a.Firings)
		fmt.Fprintf(&b, "    mean_ns: %d\n", a.Mean.Nanoseconds())
		fmt.Fprintf(&b, "    min_ns: %d\n", a.Min.Nanoseconds())
		fmt.Fprintf(&b, "    max_ns: %d\n", a.Max.Nanoseconds())
		fmt.Fprintf(&b, "    p50_ns: %d\n", a.P50.Nanoseconds())
		if a.Kind == "kernel" {
			fmt.Fprintf(&b, "    kind: kernel\n    device: %s\n    work_groups: %d\n    device_mode: %s\n",
				strconv.Quote(a.Device), a.WorkGroups, a.DeviceMode)
		}
	}
	if n == 0 {
		b.WriteString("  {}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
