package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestCLIDocCurrent fails when docs/cli.md's synopses and flag tables
// differ from the command tree. SLUICE_UPDATE_DOCS=1 rewrites them.
func TestCLIDocCurrent(t *testing.T) {
	const file = "../docs/cli.md"
	md, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot()
	got, err := updateCLIDoc(root, md)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		for _, cc := range append(c.Commands(), c) {
			if cc.Runnable() && !bytes.Contains(md, []byte("<!-- generated: "+cc.CommandPath()+" -->")) {
				t.Errorf("docs/cli.md has no generated block for %q: add <!-- generated: %s --> … <!-- end generated --> in its section", cc.CommandPath(), cc.CommandPath())
			}
		}
	}
	if bytes.Equal(got, md) {
		return
	}
	if os.Getenv("SLUICE_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	a, b := strings.Split(string(md), "\n"), strings.Split(string(got), "\n")
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Fatalf("docs/cli.md drifted from the commands at line %d:\n have: %s\n want: %s\n(rewrite it with: SLUICE_UPDATE_DOCS=1 go test ./cli -run TestCLIDocCurrent)", i+1, a[i], b[i])
		}
	}
	t.Fatalf("docs/cli.md drifted from the commands (rewrite it with: SLUICE_UPDATE_DOCS=1 go test ./cli -run TestCLIDocCurrent)")
}

// TestFlagValueNames checks that no flag's usage string has backticked text
// that pflag would take as the value's name (a name with a space reads as
// "--run-stats sluice run --stats-json" in the help).
func TestFlagValueNames(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s: value name %q (backticks in the usage string): quote the text another way", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}
