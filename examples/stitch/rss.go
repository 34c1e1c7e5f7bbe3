package stitch

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// PeakRSS is the process's peak resident set (VmHWM) in MiB, 0 where
// /proc is missing: what the stitching programs report beside their time.
func PeakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
