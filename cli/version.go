package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/device"
)

// versionInfo is what `sluice version` reports.
type versionInfo struct {
	Module   string          `json:"module"`
	Version  string          `json:"version"`
	Commit   string          `json:"commit,omitempty"`
	Modified bool            `json:"modified,omitempty"`
	Go       string          `json:"go"`
	Platform string          `json:"platform"`
	Backends []backendStatus `json:"backends,omitempty"`
}

type backendStatus struct {
	Name    string `json:"name"`
	Devices int    `json:"devices"`
	Reason  string `json:"reason,omitempty"`
}

// buildVersion reads the binary's build information: the module version
// ("(devel)" for a build from a checkout), the commit and whether the
// tree had changes, and the Go version.
func buildVersion() versionInfo {
	v := versionInfo{Module: "github.com/sluicehq/sluice", Version: "(unknown)", Go: "(unknown)"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Go = bi.GoVersion
	if bi.Main.Path != "" {
		v.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	v.Platform = goos + "/" + goarch
	return v
}

// shortLine is the one line --version prints.
func (v versionInfo) shortLine() string {
	s := "sluice " + v.Version
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (commit " + c
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + v.Go + " " + v.Platform
}

func writeVersion(w io.Writer, v versionInfo) {
	fmt.Fprintln(w, v.shortLine())
	fmt.Fprintf(w, "module %s\n", v.Module)
	for _, b := range v.Backends {
		if b.Reason == "" {
			fmt.Fprintf(w, "backend %-7s %d device(s)\n", b.Name, b.Devices)
		} else {
			fmt.Fprintf(w, "backend %-7s unavailable: %s\n", b.Name, b.Reason)
		}
	}
}

func newVersion() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print sluice's version, commit, Go version and the device backends found",
		Long: `version prints the module version (or "(devel)" for a build from a checkout), the
commit it was built from, the Go version and platform, and for each device backend
(cpu, opencl, cuda) how many devices it found or why it is unavailable.
sluice --version prints the first line only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			for _, r := range device.Discover(cmd.Context()) {
				b := backendStatus{Name: r.Backend, Devices: len(r.Devices)}
				if !r.Available() {
					b.Reason = r.Reason
				}
				v.Backends = append(v.Backends, b)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			writeVersion(cmd.OutOrStdout(), v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// versionTemplate is cobra's --version output: the first line of `sluice version`.
func versionTemplate(v versionInfo) string {
	return strings.ReplaceAll(v.shortLine(), "{", "{{`{`}}") + "\n"
}
