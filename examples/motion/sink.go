package motion

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sluicehq/sluice/runtime"
)

// Summary is what the sink folds from the frames' statistics.
type Summary struct {
	Frames int64 `json:"frames"`
	// Valid and Moving are summed over the frames after the first (the
	// first frame's flow is against the channel's initial all-zero frame,
	// so it is left out of every statistic).
	Valid  float64 `json:"valid_pixels"`
	Moving float64 `json:"moving_pixels"`
	// GlobalU and GlobalV are the mean of the frames' global motions.
	GlobalU float64 `json:"global_u"`
	GlobalV float64 `json:"global_v"`
	// MovingFrames counts the frames with at least MinMovingPixels moving.
	MovingFrames int64 `json:"moving_frames"`
	// Hash is an FNV-1a-style hash of the frames' valid and moving
	// counts, in order: equal for equal masks and flow validity.
	Hash uint64 `json:"hash"`
}

// MinMovingPixels is how many moving pixels make a frame count as one with
// motion.
const MinMovingPixels = 50

// Add accounts one frame's statistics.
func (s *Summary) Add(st [NumStats]float64) {
	if s.Frames == 0 {
		s.Hash = 14695981039346656037
	}
	s.Frames++
	s.Hash = (s.Hash ^ uint64(st[StatValid])<<20 ^ uint64(st[StatMoving])) * 1099511628211
	if s.Frames == 1 {
		return
	}
	n := float64(s.Frames - 1)
	s.Valid += st[StatValid]
	s.Moving += st[StatMoving]
	s.GlobalU += (st[StatGlobalU] - s.GlobalU) / n
	s.GlobalV += (st[StatGlobalV] - s.GlobalV) / n
	if st[StatMoving] >= MinMovingPixels {
		s.MovingFrames++
	}
}

// Sink is the stateful sink: it folds the frames' statistics into a
// Summary, prints every Every-th frame's statistics and the summary to Out
// (when set), and writes the motion masks as an MJPEG AVI to Output (or
// the file SLUICE_MOTION_OUTPUT names). It records when frame Warm and the
// last frame arrived, for frame rates without start-up costs.
type Sink struct {
	Out    io.Writer
	Every  int64  // 0: 16
	Output string // "": the environment variable SLUICE_MOTION_OUTPUT
	Warm   int64

	Sum   Summary
	first time.Time
	last  time.Time
	file  *os.File
	avi   *AVIWriter
}

// Start resets the sink and opens the mask video, if any.
func (s *Sink) Start(ctx context.Context) error {
	s.Sum = Summary{}
	s.first, s.last = time.Time{}, time.Time{}
	path := s.Output
	if path == "" {
		path = os.Getenv(EnvOutput)
	}
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("motion.sink: %w", err)
	}
	a, err := NewAVIWriter(f, W, H, ClipFPS)
	if err != nil {
		f.Close()
		return fmt.Errorf("motion.sink: %s: %w", path, err)
	}
	s.file, s.avi = f, a
	return nil
}

// Fire accounts one frame.
func (s *Sink) Fire(f *runtime.Firing) error {
	st := runtime.Input[[NumStats]float64](f, 0)[0]
	s.Sum.Add(st)
	now := time.Now()
	if f.Index() == s.Warm {
		s.first = now
	}
	s.last = now
	every := s.Every
	if every <= 0 {
		every = 16
	}
	if s.Out != nil && f.Index() > 0 && f.Index()%every == 0 {
		fmt.Fprintf(s.Out, "frame %4d: flow estimated at %5.1f%% of pixels, global motion (%+.2f, %+.2f) px/frame, %5d pixels moving against it",
			f.Index(), 100*st[StatValid]/Pixels, st[StatGlobalU], st[StatGlobalV], int(st[StatMoving]))
		if st[StatMoving] > 0 {
			fmt.Fprintf(s.Out, ", mean flow (%+.2f, %+.2f)", st[StatMovingU], st[StatMovingV])
		}
		fmt.Fprintln(s.Out)
	}
	if s.avi != nil {
		jpg, err := EncodeGray(runtime.Input[uint8](f, 1), 90)
		if err == nil {
			err = s.avi.WriteFrame(jpg)
		}
		if err != nil {
			return fmt.Errorf("motion.sink: frame %d: %w", f.Index(), err)
		}
	}
	return nil
}

// Stop prints the summary and closes the mask video.
func (s *Sink) Stop() error {
	if s.Out != nil && s.Sum.Frames > 1 {
		n := float64(s.Sum.Frames - 1)
		fmt.Fprintf(s.Out, "%d frames: flow estimated at %.1f%% of pixels, mean global motion (%+.2f, %+.2f) px/frame, %.0f pixels per frame moving against it, motion in %d frames\n",
			s.Sum.Frames, 100*s.Sum.Valid/(n*Pixels), s.Sum.GlobalU, s.Sum.GlobalV, s.Sum.Moving/n, s.Sum.MovingFrames)
	}
	if s.avi == nil {
		return nil
	}
	err := s.avi.Close()
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	if err == nil && s.Out != nil {
		fmt.Fprintf(s.Out, "motion mask video: %s\n", s.file.Name())
	}
	s.avi, s.file = nil, nil
	return err
}

// Rate returns the frames per second between the arrival of frame Warm
// and of the last frame (0 when too few frames arrived).
func (s *Sink) Rate() float64 {
	n := s.Sum.Frames - 1 - s.Warm
	if n <= 0 || !s.last.After(s.first) {
		return 0
	}
	return float64(n) / s.last.Sub(s.first).Seconds()
}
