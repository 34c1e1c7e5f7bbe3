package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/device"
)

// devicesReport is the JSON form of `sluice devices --json`.
type devicesReport struct {
	Devices     []device.Info       `json:"devices"`
	Unavailable []unavailableReport `json:"unavailable"`
}

type unavailableReport struct {
	Backend string `json:"backend"`
	Reason  string `json:"reason"`
}

func newDevices() *cobra.Command {
	var asJSON bool
	var broker, require string
	var cred credFlags
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the devices sluice can run on, and why any backend is unavailable",
		Long: `devices lists the host CPU, every OpenCL platform and device, and CUDA devices,
with their compute units and memory sizes. The ID in the first column is what a
mapping's device field takes (cpu, opencl:PLATFORM:DEVICE, cuda:N). For each backend
that has no device it says why: library not found, no platform installed, no device.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if broker != "" || require != "" {
				return remoteDevices(cmd, broker, require, cred, asJSON)
			}
			rep := collectDevices(cmd)
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			writeDevices(out, rep)
			return nil
		},
	}
	cmd.Flags().StringVar(&broker, "broker", "", "list every device of the broker tree at this URL, with the worker and broker path that reach it")
	cmd.Flags().StringVar(&require, "require", "", "with --broker: only devices meeting these requirements (e.g. 'backend=cuda,memory>=8GiB')")
	cred.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one JSON object {"devices": [...], "unavailable": [...]}`)
	return cmd
}

func collectDevices(cmd *cobra.Command) devicesReport {
	rep := devicesReport{Devices: []device.Info{}, Unavailable: []unavailableReport{}}
	for _, r := range device.Discover(cmd.Context()) {
		rep.Devices = append(rep.Devices, r.Devices...)
		if !r.Available() {
			rep.Unavailable = append(rep.Unavailable, unavailableReport{Backend: r.Backend, Reason: r.Reason})
		}
	}
	return rep
}

func writeDevices(w io.Writer, rep devicesReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tNAME\tUNITS\tMEMORY\tLOCAL\tMAX WG")
	platform := ""
	for _, d := range rep.Devices {
		if d.Platform != "" && d.Platform != platform {
			platform = d.Platform
			tw.Flush()
			fmt.Fprintf(w, "# %s platform %q\n", d.Backend, d.Platform)
		}
		local, wg := "-", "-"
		if d.LocalMem > 0 {
			local = device.Size(d.LocalMem)
		}
		if d.MaxWorkGroupSize > 0 {
			wg = fmt.Sprint(d.MaxWorkGroupSize)
		}
		mem := device.Size(d.GlobalMem)
		if d.MaxAlloc > 0 && d.MaxAlloc < d.GlobalMem {
			mem += " (max buffer " + device.Size(d.MaxAlloc) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.ID, d.Kind, d.Name, d.ComputeUnits, mem, local, wg)
		var about []string
		if d.Version != "" {
			about = append(about, d.Version)
		}
		if d.Driver != "" {
			about = append(about, "driver "+d.Driver)
		}
		if len(about) > 0 {
			tw.Flush()
			fmt.Fprintf(w, "    %s\n", strings.Join(about, " · "))
		}
	}
	tw.Flush()
	if len(rep.Unavailable) > 0 {
		fmt.Fprintln(w, "unavailable:")
		for _, u := range rep.Unavailable {
			fmt.Fprintf(w, "  %s: %s\n", u.Backend, u.Reason)
		}
	}
}
