package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/calibrate"
)

func newCalibrate() *cobra.Command {
	var (
		outFile string
		workers int
		noGPU   bool
		show    bool
		devices []string
		broker  string
		cred    credFlags
	)
	cmd := &cobra.Command{
		Use:   "calibrate [--out FILE] [--broker URL]",
		Short: "Measure this host and its GPUs and write the machine model simulate and map use",
		Long: `calibrate runs microbenchmarks on this host — effective parallelism of the CPU pool,
the runtime's costs per firing, per round and per port, a parked worker's wake-up
latency, a FIFO hand-off, memory bandwidth — and on every GPU the device backends find
(kernel launch time, copy latency and bandwidth each way from pinned and pageable
memory, concurrent copy engines, and what the runtime's device manager spends issuing
an invocation and a copy), and writes the machine model (kind: machine) that
sluice simulate and sluice map read.

The model is cached per machine (host name, CPU model, usable CPUs, GOMAXPROCS, GPU
names) under the user's cache directory, and simulate and map use it when no
--machine is given. --out also writes it to FILE. --show prints the cached model
without measuring. It takes about 5 to 20 seconds. See docs/simulate.md.

With --broker URL it also measures every worker of that broker tree through real
cross-machine channels (a token's round trip to the worker and back, and a stream
of 64 MiB to it), and the model it writes has one more processor per worker,
named after it (a mapping's worker:w1/cpu), joined to cpu by a link net-w1 of the
measured latency and bandwidth. Only the host's part is cached.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			errw := cmd.ErrOrStderr()
			if show {
				_, path, err := calibrate.Cached()
				if err != nil {
					return fmt.Errorf("no calibrated model for this machine at %s: run sluice calibrate (%w)", path, err)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(b)
				return err
			}
			res, err := calibrate.Run(cmd.Context(), calibrate.Options{Workers: workers, NoGPU: noGPU, Devices: devices,
				Log: func(format string, a ...any) { fmt.Fprintf(errw, format+"\n", a...) }})
			if err != nil {
				return err
			}
			path, err := calibrate.CachePath()
			if err != nil {
				return err
			}
			if err := res.Save(path); err != nil {
				return err
			}
			fmt.Fprintf(errw, "machine model cached at %s (%.1f s)\n", path, res.Took.Seconds())
			if broker != "" {
				err := res.Cluster(cmd.Context(), calibrate.ClusterOptions{Broker: broker, Creds: cred.creds(),
					Log: func(format string, a ...any) { fmt.Fprintf(errw, format+"\n", a...) }})
				if err != nil {
					return err
				}
			}
			if outFile != "" {
				if err := res.Save(outFile); err != nil {
					return err
				}
				fmt.Fprintf(errw, "machine model written to %s\n", outFile)
			} else {
				_, err = cmd.OutOrStdout().Write(res.YAML())
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&outFile, "out", "o", "", "also write the machine model to this file (default: print it)")
	f.IntVar(&workers, "workers", 0, "CPU pool size the model is for (0: one per core, as sluice run)")
	f.BoolVar(&noGPU, "no-gpu", false, "measure the host only")
	f.StringSliceVar(&devices, "device", nil, "measure these devices (IDs such as cuda:1 or opencl:0:0, whatever their kind) instead of every GPU")
	f.BoolVar(&show, "show", false, "print the cached model of this machine without measuring")
	f.StringVar(&broker, "broker", "", "also measure every worker of the broker tree at this URL (nats://host:port) and add them to the model")
	cred.add(f)
	return cmd
}
