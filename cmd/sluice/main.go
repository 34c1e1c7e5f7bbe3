// Command sluice checks, draws and runs dataflow graphs of actors joined by
// streams. See docs/cli.md for every command and flag.
package main

import (
	"github.com/sluicehq/sluice/cli"
	_ "github.com/sluicehq/sluice/device/all" // every backend built in
)

func main() { cli.Main() }
