package cli

import (
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/driver"
)

// timeUnitFlag names the root's persistent flag that sets how long one
// time unit of an SDF3 graph lasts.
const timeUnitFlag = "time-unit"

// loadOptions are the driver's options for the graphs a command reads:
// the --time-unit of SDF3 graphs.
func loadOptions(cmd *cobra.Command) driver.Options {
	var o driver.Options
	if f := cmd.Flag(timeUnitFlag); f != nil {
		o.TimeUnit, _ = cmd.Flags().GetDuration(timeUnitFlag)
	}
	return o
}
