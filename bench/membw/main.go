// Command membw measures the host's memory bandwidth with N goroutines at
// once, each on its own buffer far larger than the caches: reading (a sum
// of 64-bit words), writing (clearing) and copying. The figures bound what
// a pipeline whose host actors touch every byte can move: the CUDA image
// pipeline's source writes each frame, the device reads it and writes its
// motion frame back, and the stats actor reads that (four passes over 76.8
// KB a frame).
//
//	go run ./bench/membw -workers 1,2,8,16 -mib 256
//
// prints one JSON object per worker count (GB/s, 1 GB = 1e9 bytes).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Result is one worker count's bandwidths.
type Result struct {
	Workers int     `json:"workers"`
	MiB     int     `json:"mib_per_worker"`
	ReadGB  float64 `json:"read_gb_s"`
	WriteGB float64 `json:"write_gb_s"`
	CopyGB  float64 `json:"copy_gb_s"` // bytes read + bytes written
}

func main() {
	workers := flag.String("workers", "1,2,4,8,16", "comma-separated goroutine counts")
	mib := flag.Int("mib", 256, "buffer per goroutine in MiB (a copy uses two)")
	rounds := flag.Int("rounds", 3, "passes of each kind; the fastest is reported")
	flag.Parse()
	for _, w := range strings.Split(*workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "membw: -workers: %q is not a positive count\n", w)
			os.Exit(2)
		}
		r := measure(n, *mib<<20, *rounds)
		r.MiB = *mib
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
}

// measure runs n goroutines over their own buffers of size bytes.
func measure(n, size, rounds int) Result {
	src := make([][]byte, n)
	dst := make([][]byte, n)
	for i := range src {
		src[i], dst[i] = make([]byte, size), make([]byte, size)
		for j := range src[i] { // touch every page
			src[i][j], dst[i][j] = byte(j), byte(j)
		}
	}
	res := Result{Workers: n}
	bytes := float64(n) * float64(size)
	sums := make([]uint64, n) // each goroutine's sum, kept so the reads are not optimised away
	res.ReadGB = best(rounds, n, func(i int) {
		words := unsafe.Slice((*uint64)(unsafe.Pointer(&src[i][0])), size/8)
		var s0, s1, s2, s3 uint64
		for j := 0; j+4 <= len(words); j += 4 {
			s0 += words[j]
			s1 += words[j+1]
			s2 += words[j+2]
			s3 += words[j+3]
		}
		sums[i] = s0 + s1 + s2 + s3
	}, bytes)
	if sums[0] == 1 { // never, but the compiler cannot know
		fmt.Fprintln(os.Stderr, "membw: sum", sums[0])
	}
	res.WriteGB = best(rounds, n, func(i int) { clear(dst[i]) }, bytes)
	res.CopyGB = best(rounds, n, func(i int) { copy(dst[i], src[i]) }, 2*bytes)
	return res
}

// best times rounds passes of f on n goroutines at once and returns the
// fastest as GB/s of bytes moved.
func best(rounds, n int, f func(i int), bytes float64) float64 {
	var top float64
	for range rounds {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				f(i)
			}()
		}
		t0 := time.Now()
		close(start)
		wg.Wait()
		top = max(top, bytes/time.Since(t0).Seconds()/1e9)
	}
	return top
}
