package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/flowmodel"
)

func newWorker() *cobra.Command {
	var (
		o         cluster.WorkerOptions
		cf        credFlags
		devices   string
		maxStream string
		quiet     bool
		insecure  bool
	)
	cmd := &cobra.Command{
		Use:   "worker --broker URL",
		Short: "Lend this host's devices to a broker tree and run the actors sent to it",
		Long: `worker joins a broker as a NATS micro service (sluice-worker), advertises its
devices (every field of sluice devices) and its limits, and runs the actors that
clients place on it: built-ins, Go functions registered in this binary, kernels
shipped as source with the request. It also serves flow-models (package
flowmodel) under its name, for flowmodel.Remote clients. --max-stream refuses actors whose streams
exceed that many bytes; --max-time cancels an actor that runs longer. File
actors (file.read, file.write, csv.*, image.*) run only with --data-dir DIR,
confined to DIR: relative paths resolve inside it, and absolute paths, ".."
above it and symbolic links out of it are refused. Every request is checked
against the worker's limits before it is taken (docs/cluster.md). It runs
until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Broker == "" {
				return fmt.Errorf("worker: --broker URL is required (the broker to join, e.g. nats://127.0.0.1:4222)")
			}
			if maxStream != "" {
				n, err := cluster.ParseSize(maxStream)
				if err != nil {
					return fmt.Errorf("worker: --max-stream: %w", err)
				}
				o.Limits.MaxStream = n
			}
			rep := collectDevices(cmd)
			if devices != "" {
				var keep []device.Info
				for _, id := range strings.Split(devices, ",") {
					id = strings.TrimSpace(id)
					found := false
					for _, d := range rep.Devices {
						if d.ID == id {
							keep, found = append(keep, d), true
						}
					}
					if !found {
						var ids []string
						for _, d := range rep.Devices {
							ids = append(ids, d.ID)
						}
						return fmt.Errorf("worker: --devices: no device %q on this host (it has %s)", id, strings.Join(ids, ", "))
					}
				}
				rep.Devices = keep
			}
			o.Devices = rep.Devices
			o.Creds = cf.creds()
			stderr := cmd.ErrOrStderr()
			if os.Geteuid() == 0 {
				fmt.Fprintf(stderr, "warning: worker runs as root (uid 0): the actors clients send run with every privilege of this host; run it as an unprivileged user\n")
			}
			// Direct data streams beyond loopback from a worker that presents
			// no credential: its broker lets anyone in to run jobs on it.
			warn, err := cluster.CheckExposure("worker", []string{o.DataListen}, !o.Creds.Empty() || strings.Contains(o.Broker, "@"), insecure)
			if err != nil {
				return err
			}
			if warn != "" {
				fmt.Fprintln(stderr, warn)
			}
			if !quiet {
				o.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
			}
			w, err := cluster.StartWorker(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer w.Close()
			var ids []string
			for _, d := range o.Devices {
				ids = append(ids, d.ID)
			}
			// Flow-models: serve this host's devices to flowmodel.Remote
			// clients under the worker's name.
			fc, err := cluster.Connect(cmd.Context(), o.Broker, o.Creds)
			if err != nil {
				return fmt.Errorf("worker: flow-model service: %w", err)
			}
			defer fc.Close()
			fms, err := flowmodel.Serve(fc.Conn(), w.Name(), flowmodel.Limited{Host: flowmodel.Local{Only: ids}, MaxStream: o.Limits.MaxStream})
			if err != nil {
				return fmt.Errorf("worker: %w", err)
			}
			defer fms.Close()
			files := "file actors refused (no --data-dir)"
			if o.DataDir != "" {
				files = "file actors confined to " + o.DataDir
			}
			fmt.Fprintf(stderr, "worker %s: joined broker %s, lending %s; %s\n", w.Name(), w.Info().Broker, strings.Join(ids, ", "), files)
			<-cmd.Context().Done()
			fmt.Fprintf(stderr, "worker %s: leaving\n", w.Name())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Broker, "broker", "", "broker URL to join (nats://host:port)")
	fl.StringVar(&o.Name, "name", "", "worker name, unique in the tree (default HOST-PID)")
	fl.StringVar(&devices, "devices", "", "comma-separated device IDs to lend (default: every device of sluice devices)")
	fl.StringVar(&maxStream, "max-stream", "", "largest stream accepted, in bytes (e.g. 512MiB; default no limit)")
	fl.DurationVar(&o.Limits.MaxTime, "max-time", 0, "longest an actor may run here (e.g. 10m; default no limit)")
	fl.DurationVar(&o.HeartbeatTimeout, "heartbeat-timeout", cluster.DefaultHeartbeatTimeout, "drop a job whose client is silent this long")
	fl.StringVar(&o.DataListen, "data-listen", "", "accept direct TCP data streams here (HOST:PORT, e.g. 0.0.0.0:7500); tokens go over NATS without it")
	fl.StringVar(&o.DataAdvertise, "data-advertise", "", "the HOST:PORT clients dial for data streams (default: the --data-listen address)")
	fl.BoolVarP(&quiet, "quiet", "q", false, "do not log jobs")
	fl.StringVar(&o.DataDir, "data-dir", "", "directory the file actors of jobs run here are confined to (default: file actors refused)")
	fl.BoolVar(&insecure, "insecure", false, "allow --data-listen beyond loopback without credentials for the broker (warns)")
	cf.add(fl)
	return cmd
}
