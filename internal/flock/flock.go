// Package flock takes an exclusive lock on a file, across processes: the
// builds that write one binary in the user's cache (a graph's Go-actor
// program, the documented commands' sluice) take turns with it.
package flock
