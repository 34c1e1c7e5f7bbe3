package fifo_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/fifo"
)

// A producer fills windows in place and closes the stream; the consumer
// reads windows in place until end of stream.
func Example() {
	f, err := fifo.New(fifo.Options{Name: "src.out->sum.in", TokenSize: 4, Capacity: 8})
	if err != nil {
		panic(err)
	}
	defer f.Free()
	ctx := context.Background()

	go func() {
		w := f.Writer()
		for i := 0; i < 10; i += 2 {
			win, err := w.Acquire(ctx, 2) // room for 2 float32, contiguous
			if err != nil {
				panic(err)
			}
			v := fifo.Tokens[float32](win)
			v[0], v[1] = float32(i), float32(i+1)
			w.Commit(2)
		}
		w.Close()
	}()

	r := f.Reader(0)
	var sum float32
	for {
		win, err := r.Acquire(ctx, 3)
		if errors.Is(err, fifo.ErrClosed) {
			win = r.TryAcquire(3) // the last, shorter window
			if len(win) == 0 {
				break
			}
		} else if err != nil {
			panic(err)
		}
		for _, x := range fifo.Tokens[float32](win) {
			sum += x
		}
		r.Release(len(win) / f.TokenSize())
	}
	fmt.Println(sum, r.Open(), f.CopiedBytes())
	// Output: 45 false 0
}

// Broadcast: one writer, two readers, each sees every token.
func ExampleFIFO_Reader() {
	f, _ := fifo.New(fifo.Options{Name: "bcast", TokenSize: 1, Capacity: 4, Readers: 2, Initial: 1, InitialData: []byte{'a'}})
	defer f.Free()
	ctx := context.Background()
	_ = f.Writer().Write(ctx, []byte("bc"))
	for i := range 2 {
		p := make([]byte, 3)
		n, _ := f.Reader(i).Read(ctx, p)
		fmt.Println(i, string(p[:n]))
	}
	// Output:
	// 0 abc
	// 1 abc
}
