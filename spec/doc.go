// Package spec turns files into the graph model: YAML graph files
// (LoadGraph, ParseGraph), YAML mapping files (LoadMapping, ParseMapping),
// and the XML graph and mapping formats of the ETH Zurich OpenCL dataflow
// framework (ImportETHGraph, ImportETHMapping). Load picks the graph format
// from the file name.
//
// Every problem found is reported at once, each with the file, line and
// column of the offending YAML node or XML element, as an ErrorList:
//
//	cd2dat.yaml:9:12: channels[0]: from: unknown actor "Aa" in "Aa.o" (did you mean "A"?)
//
// The graph is validated (graph.Graph.Validate) and its problems are
// reported in the same list, at the positions recorded in the Origin
// fields of actors, ports, channels and boundaries ("file:line:col").
//
// spec never runs anything: kernel files are only checked to exist. The
// format is documented in docs/spec.md of the repository.
package spec
