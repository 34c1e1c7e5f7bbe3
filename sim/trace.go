package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// lanes numbers every processor unit and interconnect channel: processors
// first, in machine order, then interconnects.
func (r *Result) lanes() (names []string, base func(bus bool, elem string) int) {
	idx := map[string]int{}
	for i, p := range r.Processors {
		idx["p"+p] = len(names)
		for u := 0; u < r.Units[i]; u++ {
			n := p
			if r.Units[i] > 1 {
				n = fmt.Sprintf("%s.%d", p, u)
			}
			names = append(names, n)
		}
	}
	for i, b := range r.Interconnects {
		idx["b"+b] = len(names)
		for c := 0; c < r.Channels[i]; c++ {
			n := b
			if r.Channels[i] > 1 {
				n = fmt.Sprintf("%s.ch%d", b, c)
			}
			names = append(names, n)
		}
	}
	return names, func(bus bool, elem string) int {
		if bus {
			return idx["b"+elem]
		}
		return idx["p"+elem]
	}
}

type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteChrome writes the trace (Config.Trace) as Chrome Trace Event JSON,
// which Perfetto and chrome://tracing open: process 1 holds one thread per
// processor unit, process 2 one per interconnect channel; times are in
// microseconds of simulated time.
func (r *Result) WriteChrome(w io.Writer) error {
	names, base := r.lanes()
	evs := []chromeEvent{
		{Name: "process_name", Ph: "M", Pid: 1, Args: map[string]any{"name": "processors"}},
		{Name: "process_name", Ph: "M", Pid: 2, Args: map[string]any{"name": "interconnects"}},
	}
	nproc := 0
	for _, u := range r.Units {
		nproc += u
	}
	for i, n := range names {
		pid := 1
		if i >= nproc {
			pid = 2
		}
		evs = append(evs, chromeEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: i, Args: map[string]any{"name": n}})
	}
	for _, s := range r.Spans {
		tid := base(s.Bus, s.Element) + s.Lane
		ev := chromeEvent{Name: s.Name, Ph: "X", Ts: s.Start * 1e6, Dur: (s.End - s.Start) * 1e6, Pid: 1, Tid: tid, Cat: "firing"}
		if s.Bus {
			ev.Pid, ev.Cat = 2, "message"
			ev.Args = map[string]any{"bytes": s.Bytes}
		}
		evs = append(evs, ev)
	}
	bw := bufio.NewWriter(w)
	if err := json.NewEncoder(bw).Encode(map[string]any{"traceEvents": evs, "displayTimeUnit": "ns"}); err != nil {
		return err
	}
	return bw.Flush()
}

// Paraver event types written by WriteParaver.
const (
	ParaverSubtaskEvent = 9000001 // value: task index + 1, 0 at the end
	ParaverStreamEvent  = 9000002 // value: stream index + 1, 0 at the end
)

// WriteParaver writes the trace as a Paraver trace (.prv), its
// configuration (.pcf: states and event names) and its row names (.row).
// Every processor unit and interconnect channel is one thread (and one
// CPU) of one task of one application; busy intervals are state 1
// (Running); subtask and stream events mark what runs. Times are integer
// nanoseconds of simulated time.
func (r *Result) WriteParaver(prv, pcf, row io.Writer) error {
	names, base := r.lanes()
	n := len(names)
	ns := func(t float64) int64 { return int64(math.Round(t * 1e9)) }
	type rec struct {
		t    int64
		k    int
		line string
	}
	var recs []rec
	for i, s := range r.Spans {
		th := base(s.Bus, s.Element) + s.Lane + 1
		b, e := ns(s.Start), ns(s.End)
		typ, val := ParaverSubtaskEvent, s.Task+1
		if s.Bus {
			typ = ParaverStreamEvent
		}
		recs = append(recs,
			rec{b, 3 * i, fmt.Sprintf("1:%d:1:1:%d:%d:%d:1", th, th, b, e)},
			rec{b, 3*i + 1, fmt.Sprintf("2:%d:1:1:%d:%d:%d:%d", th, th, b, typ, val)},
			rec{e, 3*i + 2, fmt.Sprintf("2:%d:1:1:%d:%d:%d:0", th, th, e, typ)})
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].t != recs[j].t {
			return recs[i].t < recs[j].t
		}
		return recs[i].k < recs[j].k
	})
	end := ns(r.Makespan)
	for _, s := range r.Spans {
		end = max(end, ns(s.End))
	}
	bw := bufio.NewWriter(prv)
	fmt.Fprintf(bw, "#Paraver (01/01/70 at 00:00):%d_ns:1(%d):1:1(%d:1)\n", end, n, n)
	for _, x := range recs {
		bw.WriteString(x.line)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\nLOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\nNUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\n")
	b.WriteString("STATES\n0    Idle\n1    Running\n\n\nSTATES_COLOR\n0    {117,195,255}\n1    {0,0,255}\n\n\n")
	fmt.Fprintf(&b, "EVENT_TYPE\n0    %d    Subtask\nVALUES\n0      End\n", ParaverSubtaskEvent)
	for i, t := range r.Tasks {
		fmt.Fprintf(&b, "%d      %s\n", i+1, t)
	}
	fmt.Fprintf(&b, "\n\nEVENT_TYPE\n0    %d    Stream message\nVALUES\n0      End\n", ParaverStreamEvent)
	streams := map[int]string{}
	for _, s := range r.Spans {
		if s.Bus {
			streams[s.Task] = s.Name
		}
	}
	keys := make([]int, 0, len(streams))
	for k := range streams {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%d      %s\n", k+1, streams[k])
	}
	if _, err := io.WriteString(pcf, b.String()); err != nil {
		return err
	}
	b.Reset()
	fmt.Fprintf(&b, "LEVEL CPU SIZE %d\n%s\n\nLEVEL NODE SIZE 1\nmachine\n\nLEVEL THREAD SIZE %d\n%s\n", n, strings.Join(names, "\n"), n, strings.Join(names, "\n"))
	_, err := io.WriteString(row, b.String())
	return err
}

// WriteParaverFiles writes path (.prv) and, beside it, the .pcf and .row
// files with the same base name.
func (r *Result) WriteParaverFiles(path string) error {
	stem := strings.TrimSuffix(path, ".prv")
	files := []string{path, stem + ".pcf", stem + ".row"}
	var fs []*os.File
	defer func() {
		for _, f := range fs {
			f.Close()
		}
	}()
	for _, p := range files {
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		fs = append(fs, f)
	}
	if err := r.WriteParaver(fs[0], fs[1], fs[2]); err != nil {
		return fmt.Errorf("sim: writing %s: %w", path, err)
	}
	for _, f := range fs {
		if err := f.Close(); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	fs = nil
	return nil
}

// WriteChromeFile writes the Chrome trace to path.
func (r *Result) WriteChromeFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if err := r.WriteChrome(f); err != nil {
		f.Close()
		return fmt.Errorf("sim: writing %s: %w", path, err)
	}
	return f.Close()
}
