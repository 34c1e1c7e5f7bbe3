package runtime

import "github.com/sluicehq/sluice/internal/fsroot"

// FileAccess is how the built-in actors that name files (file.read,
// file.write, csv.read, csv.write, image.read, image.write) reach them.
// A run passes it in Options.Files; each such actor's factory receives it
// in its Params (Params.Files) when it is constructed, so two runs in one
// process may have different roots.
//
// The zero FileAccess is unconfined: `sluice run` reads and writes
// wherever its user can. A worker started with --data-dir DIR sets Root to
// DIR; one started without sets Refused, and the workbench sets Root to
// the directory it serves and NoStdin.
type FileAccess struct {
	// Root, when set, confines every path to a directory tree: absolute
	// paths, ".." above it and symbolic links out of it are refused
	// (fsroot.EscapeError).
	Root *fsroot.Root
	// Refused, when set, refuses every actor that names a file, with
	// this sentence as the reason.
	Refused string
	// NoStdin, when set, refuses the built-in stdin actor with this
	// sentence as the reason: the process that runs the graph is a server
	// whose standard input nobody feeds (a read would wait on its
	// terminal, and no cancellation can interrupt it).
	NoStdin string
}
