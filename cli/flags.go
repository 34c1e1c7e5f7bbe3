package cli

import (
	"fmt"

	"github.com/spf13/pflag"
)

// alias registers old, a former spelling of the flag named name, as a
// hidden flag sharing name's value: it keeps scripts working and tells the
// user the new spelling each time it is used.
func alias(fs *pflag.FlagSet, old, name string) {
	f := fs.Lookup(name)
	if f == nil {
		panic(fmt.Sprintf("cli: alias %q for an unknown flag %q", old, name))
	}
	fs.AddFlag(&pflag.Flag{Name: old, Usage: f.Usage, Value: f.Value, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal})
	_ = fs.MarkHidden(old)
	_ = fs.MarkDeprecated(old, "use --"+name)
}
