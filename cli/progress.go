package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/cwriter"
	"github.com/vbauerster/mpb/v8/decor"
)

// defaultBarsWidth is the line width of the progress bars where the output
// reports no usable width: a terminal that says it has 0 columns (some
// pseudo-terminals do), or an output that is no terminal.
const defaultBarsWidth = 80

// barWidth is the width of the bar itself, within its line.
const barWidth = 40

// minRateInterval is the shortest run time a firing rate is computed over:
// a rate over less than this is noise (the first frame would show millions
// a second), so no rate is shown before it.
const minRateInterval = 250 * time.Millisecond

// barsLineWidth is the line width of the bars from the columns a terminal
// reports (err: it reported none): its columns, or defaultBarsWidth.
func barsLineWidth(cols int, err error) int {
	if err != nil || cols <= 0 {
		return defaultBarsWidth
	}
	return cols
}

// terminalColumns reports w's columns when w is a terminal (ok false when
// it is not one).
func terminalColumns(w io.Writer) (cols int, err error, ok bool) {
	fh, isFile := w.(*os.File)
	if !isFile || !cwriter.IsTerminal(int(fh.Fd())) {
		return 0, nil, false
	}
	cols, _, err = cwriter.GetSize(int(fh.Fd()))
	return cols, err, true
}

// barsContainer makes the bars' container writing to w. A terminal that
// reports its columns is handed to mpb as is (it follows resizes); any
// other output is wrapped so that mpb draws in defaultBarsWidth columns,
// redrawing on a timer (--progress bars asks for bars on any output).
func barsContainer(w io.Writer) *mpb.Progress {
	opts := []mpb.ContainerOption{mpb.WithRefreshRate(150 * time.Millisecond)}
	cols, err, term := terminalColumns(w)
	if term && err == nil && cols > 0 {
		return mpb.New(append(opts, mpb.WithOutput(w))...)
	}
	return mpb.New(append(opts, mpb.WithOutput(struct{ io.Writer }{w}), mpb.WithWidth(barsLineWidth(cols, err)), mpb.WithAutoRefresh())...)
}

// firingRate is firings over the run's elapsed time, in firings a second;
// ok is false before the run has lasted minRateInterval.
func firingRate(firings int64, elapsed time.Duration) (rate float64, ok bool) {
	if elapsed < minRateInterval {
		return 0, false
	}
	return float64(firings) / elapsed.Seconds(), true
}

// rateText holds the rate text of each bar, set from each snapshot and
// read by the drawing goroutine.
type rateText struct {
	mu   sync.Mutex
	text map[string]string
}

// set records name's rate from its firings over the run's elapsed time.
func (r *rateText) set(name string, firings int64, elapsed time.Duration) {
	text := ""
	if rate, ok := firingRate(firings, elapsed); ok {
		text = fmt.Sprintf(" %.0f/s", rate)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.text == nil {
		r.text = map[string]string{}
	}
	r.text[name] = text
}

// get returns name's rate text ("" before there is a rate).
func (r *rateText) get(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text[name]
}

// decorator draws name's rate.
func (r *rateText) decorator(name string) decor.Decorator {
	return decor.Any(func(decor.Statistics) string { return r.get(name) }, decor.WCSyncSpace)
}
