package cli

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cliDocMarker opens a generated block of docs/cli.md: the synopsis and
// flag table of one command, written from the command tree so that the
// page never drifts from the binary (TestCLIDocCurrent).
var cliDocMarker = regexp.MustCompile(`(?s)<!-- generated: (sluice[a-z \-]*) -->\n.*?<!-- end generated -->`)

// updateCLIDoc rewrites every generated block of md from root's commands.
// It returns an error naming a block whose command does not exist.
func updateCLIDoc(root *cobra.Command, md []byte) ([]byte, error) {
	var err error
	out := cliDocMarker.ReplaceAllFunc(md, func(block []byte) []byte {
		path := string(cliDocMarker.FindSubmatch(block)[1])
		c, _, ferr := root.Find(strings.Fields(path)[1:])
		if ferr != nil || c.CommandPath() != path {
			err = fmt.Errorf("docs/cli.md: generated block for %q: no such command", path)
			return block
		}
		return []byte(fmt.Sprintf("<!-- generated: %s -->\n%s<!-- end generated -->", path, synopsis(c)))
	})
	return out, err
}

// synopsis is a command's usage line and a table of its flags (hidden
// flags, the old spellings kept as aliases, are left out).
func synopsis(c *cobra.Command) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "```\n%s\n```\n\n%s\n", c.UseLine(), c.Short)
	var rows []string
	c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		flag := "--" + f.Name
		if f.Shorthand != "" {
			flag = "-" + f.Shorthand + ", " + flag
		}
		if name != "" {
			flag += " " + name
		}
		def := f.DefValue
		switch def {
		case "", "false", "[]", "0", "0s":
			def = ""
		default:
			def = "`" + def + "`"
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s |", flag, def, strings.ReplaceAll(usage, "|", `\|`)))
	})
	if len(rows) > 0 {
		b.WriteString("\n| flag | default | meaning |\n|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n"))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}
